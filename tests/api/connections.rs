//! The HTTP server's own defences (ARCHITECTURE.md §19, HTTP server): connections
//! whose headers never finish are closed after the header timeout while
//! others are served, idle keep-alive connections close, and connections
//! are capped per client address and in total. The attackers connect from
//! other loopback addresses (127.0.0.2 and up) than the honest client.

use crate::helpers::{Backend, TestApp};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use tokio::time::Instant;

/// A connection to `app` from the loopback address `from`.
async fn connect_from(app: &TestApp, from: [u8; 4]) -> TcpStream {
    let server: SocketAddr = app
        .address
        .trim_start_matches("http://")
        .parse()
        .expect("the server's address");
    let socket = TcpSocket::new_v4().expect("a socket");
    socket
        .bind(SocketAddr::from((from, 0)))
        .expect("bind a loopback address");
    socket.connect(server).await.expect("connect")
}

/// Waits (up to a minute, far beyond any timeout under test) for the
/// server to close `stream`; what it sent before closing.
async fn closed_by_server(stream: &mut TcpStream) -> Result<Vec<u8>, &'static str> {
    let mut sent = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut buf)).await {
            Err(_) => return Err("still open after a minute"),
            Ok(Ok(0)) | Ok(Err(_)) => return Ok(sent),
            Ok(Ok(n)) => sent.extend_from_slice(&buf[..n]),
        }
    }
}

/// One complete request on a connection of its own; the status.
async fn get_from(app: &TestApp, from: [u8; 4], path: &str) -> Option<u16> {
    let mut stream = connect_from(app, from).await;
    let request = format!("GET {path} HTTP/1.1\r\nhost: gpuex\r\nconnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.ok()?;
    let answer = closed_by_server(&mut stream).await.ok()?;
    String::from_utf8_lossy(&answer)
        .split(' ')
        .nth(1)?
        .parse()
        .ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_that_never_finish_their_headers_are_closed_while_others_are_served() {
    let app = TestApp::spawn_with(Backend::Sqlite, |s| {
        s.header_read_timeout_s = 1;
        s.max_connections_per_address = 500;
    })
    .await;
    // 200 connections, each with half a request that never ends.
    let mut slow = Vec::new();
    for _ in 0..200 {
        // Before connecting: the server's clock starts later than this.
        let opened = Instant::now();
        let mut stream = connect_from(&app, [127, 0, 0, 2]).await;
        stream
            .write_all(b"GET /healthz HTTP/1.1\r\nhost: gpuex\r\nx-slow: ")
            .await
            .expect("half a request");
        slow.push((stream, opened));
    }

    // An honest client is answered meanwhile.
    let honest = app
        .client
        .get(format!("{}/healthz", app.address))
        .timeout(Duration::from_secs(10))
        .send()
        .await
        .expect("answered while 200 connections hang");
    assert_eq!(honest.status(), 200);

    // Every slow connection is closed, with no answer, and not before its
    // header timeout.
    for (mut stream, opened) in slow {
        let sent = closed_by_server(&mut stream)
            .await
            .expect("closed after the header timeout");
        assert!(opened.elapsed() >= Duration::from_secs(1));
        assert!(sent.is_empty(), "{}", String::from_utf8_lossy(&sent));
    }
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_kept_alive_connection_is_closed_after_the_keep_alive() {
    let app = TestApp::spawn_with(Backend::Sqlite, |s| {
        s.header_read_timeout_s = 1;
        s.keep_alive_idle_s = 2;
    })
    .await;
    let mut stream = connect_from(&app, [127, 0, 0, 1]).await;
    // Before asking: the connection idles from its answer, later than this.
    let asked = Instant::now();
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nhost: gpuex\r\n\r\n")
        .await
        .expect("a request");
    // Its answer (a small JSON body) arrives and the connection stays for more.
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&answer).contains("\r\n\r\n{") {
        let n = stream.read(&mut buf).await.expect("the answer");
        assert!(n > 0, "closed right after the answer");
        answer.extend_from_slice(&buf[..n]);
    }
    assert!(String::from_utf8_lossy(&answer).starts_with("HTTP/1.1 200"));
    // Idle longer than the header timeout is fine; the keep-alive ends it.
    closed_by_server(&mut stream)
        .await
        .expect("closed after the keep-alive");
    assert!(asked.elapsed() >= Duration::from_secs(2));
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_are_capped_per_client_address_and_in_total() {
    let app = TestApp::spawn_with(Backend::Sqlite, |s| {
        s.max_connections_per_address = 5;
        s.max_connections = 10;
    })
    .await;
    // Five open connections from one address: the sixth is refused with a
    // problem, before anything is read.
    let mut held = Vec::new();
    for _ in 0..5 {
        held.push(connect_from(&app, [127, 0, 0, 2]).await);
    }
    let mut sixth = connect_from(&app, [127, 0, 0, 2]).await;
    let refusal = closed_by_server(&mut sixth).await.expect("refused");
    let refusal = String::from_utf8_lossy(&refusal).into_owned();
    assert!(refusal.starts_with("HTTP/1.1 503 "), "{refusal}");
    assert!(refusal.contains("application/problem+json"), "{refusal}");
    assert!(
        refusal.contains("\"code\":\"too_many_connections\""),
        "{refusal}"
    );

    // Another address is served.
    assert_eq!(get_from(&app, [127, 0, 0, 1], "/healthz").await, Some(200));

    // Five more from a third address fill the total of ten; then even a
    // new address is refused.
    for _ in 0..5 {
        held.push(connect_from(&app, [127, 0, 0, 3]).await);
    }
    let mut over = connect_from(&app, [127, 0, 0, 4]).await;
    let refusal = closed_by_server(&mut over).await.expect("refused");
    assert!(String::from_utf8_lossy(&refusal).starts_with("HTTP/1.1 503 "));

    // Closed connections give their places back.
    drop(held);
    let mut served = None;
    for _ in 0..100 {
        served = get_from(&app, [127, 0, 0, 2], "/healthz").await;
        if served == Some(200) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(served, Some(200));
    app.stop().await;
}
