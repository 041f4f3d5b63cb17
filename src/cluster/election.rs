//! The engine leader's election: `pg_try_advisory_lock` on a connection
//! of this replica's own. The lock lives as long as that connection's
//! session, so a leader that dies (kill -9, a lost network) frees it; a
//! leader that cannot reach its connection within [`PROBE_TIMEOUT`] stops
//! leading at once, before PostgreSQL notices the dead session (its TCP
//! keepalives are set to notice within about [`KEEPALIVE_NOTICE_S`] s).

use super::{Role, CHANGES_CHANNEL, SHARD};
use sqlx::postgres::{PgConnectOptions, PgListener};
use sqlx::{ConnectOptions, Connection, PgConnection};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{oneshot, watch, Mutex, Notify};

/// The advisory lock of a shard: a fixed tag ("gpuex" in ASCII) beside it.
pub fn lock_key(shard: i32) -> i64 {
    (0x0067_7075_6578_i64 << 16) | i64::from(shard)
}

/// How often a follower tries the lock, and a leader probes its connection.
const EVERY: Duration = Duration::from_millis(500);

/// A probe or try that takes longer counts as a lost database.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// What PostgreSQL takes to notice a vanished leader: idle + count × interval.
pub const KEEPALIVE_NOTICE_S: u32 = 5 + 3;

/// The election's task, and how to stop it.
pub struct Election {
    role: watch::Receiver<Role>,
    stop: Mutex<Option<oneshot::Sender<oneshot::Sender<()>>>>,
}

impl Election {
    /// Starts electing; returns once the first outcome is known (or after
    /// a few seconds without one, detached).
    pub async fn start(
        database_url: &str,
        advertise_url: String,
        changes: Arc<Notify>,
    ) -> anyhow::Result<Election> {
        let options = PgConnectOptions::from_str(database_url)?
            .application_name("gpuex-leader-election")
            .disable_statement_logging();
        let (role_tx, mut role) = watch::channel(Role::Detached {
            why: "the leader election has not run yet",
        });
        let (stop, stopped) = oneshot::channel();
        tokio::spawn(elect(options.clone(), advertise_url, role_tx, stopped));
        tokio::spawn(listen(
            options.application_name("gpuex-market-listener"),
            changes,
            role.clone(),
        ));
        let _ = tokio::time::timeout(
            Duration::from_secs(5),
            role.wait_for(|r| !matches!(r, Role::Detached { .. })),
        )
        .await;
        Ok(Election {
            role,
            stop: Mutex::new(Some(stop)),
        })
    }

    pub fn role(&self) -> watch::Receiver<Role> {
        self.role.clone()
    }

    /// Unlocks and closes the election's connection, and waits until it did.
    pub async fn stop(&self) {
        if let Some(stop) = self.stop.lock().await.take() {
            let (done, finished) = oneshot::channel();
            if stop.send(done).is_ok() {
                let _ = finished.await;
            }
        }
    }
}

/// Connects, then tries the lock until it is this replica's; leads until
/// the connection fails; starts over. Ends when told to stop.
async fn elect(
    options: PgConnectOptions,
    advertise_url: String,
    role: watch::Sender<Role>,
    mut stop: oneshot::Receiver<oneshot::Sender<()>>,
) {
    let set = |r: Role| {
        role.send_if_modified(|current| {
            if *current == r {
                return false;
            }
            tracing::info!(role = r.name(), detail = ?r, "market role changed");
            *current = r;
            true
        });
    };
    let mut conn: Option<PgConnection> = None;
    let mut leading = false;
    loop {
        let done = tokio::select! {
            done = &mut stop => done.ok(),
            () = tokio::time::sleep(if conn.is_some() { EVERY } else { Duration::ZERO }) => None,
        };
        if let Some(done) = done {
            set(Role::Detached {
                why: "the server is stopping",
            });
            if let Some(mut c) = conn.take() {
                if leading {
                    let _ = sqlx::query("SELECT pg_advisory_unlock($1)")
                        .bind(lock_key(SHARD))
                        .execute(&mut c)
                        .await;
                }
                let _ = c.close().await;
            }
            let _ = done.send(());
            return;
        }
        let Some(c) = conn.as_mut() else {
            match tokio::time::timeout(PROBE_TIMEOUT, connect(&options)).await {
                Ok(Ok(c)) => conn = Some(c),
                _ => {
                    set(Role::Detached {
                        why: "the database is unreachable",
                    });
                    tokio::time::sleep(EVERY).await;
                }
            }
            continue;
        };
        let step = if leading {
            tokio::time::timeout(PROBE_TIMEOUT, probe(c)).await
        } else {
            tokio::time::timeout(PROBE_TIMEOUT, try_lead(c, &advertise_url)).await
        };
        match step {
            Ok(Ok(Outcome::Leading(epoch))) => {
                leading = true;
                set(Role::Leader { epoch: Some(epoch) });
            }
            Ok(Ok(Outcome::StillLeading)) => {}
            Ok(Ok(Outcome::Following(leader_url, leader_epoch))) => set(Role::Follower {
                leader_url,
                leader_epoch,
            }),
            Ok(Err(_)) | Err(_) => {
                // Step down first: whoever takes the lock next must not
                // find this replica still writing.
                if leading {
                    tracing::error!("lost the database connection while leading; stepping down");
                }
                set(Role::Detached {
                    why: "the database connection of the leader election failed",
                });
                leading = false;
                // Dropping the connection ends its session, and with it the lock.
                conn = None;
            }
        }
    }
}

enum Outcome {
    Leading(i64),
    StillLeading,
    /// Another replica leads: where it listens, and in which epoch.
    Following(Option<String>, Option<i64>),
}

/// A session that PostgreSQL drops within seconds of its client vanishing:
/// keepalives find a silent peer, and the user timeout ends a connection
/// whose sent data goes unacknowledged (a cut link), so the lock is free
/// for another replica soon after this one can no longer lead.
async fn connect(options: &PgConnectOptions) -> Result<PgConnection, sqlx::Error> {
    let mut conn = options.connect().await?;
    for setting in [
        "SET tcp_keepalives_idle = 5",
        "SET tcp_keepalives_interval = 1",
        "SET tcp_keepalives_count = 3",
        "SET tcp_user_timeout = 5000",
    ] {
        sqlx::query(setting).execute(&mut conn).await?;
    }
    Ok(conn)
}

/// Takes the lock if free, and then a new epoch; else reads who leads.
async fn try_lead(conn: &mut PgConnection, advertise_url: &str) -> Result<Outcome, sqlx::Error> {
    let locked: bool = sqlx::query_scalar("SELECT pg_try_advisory_lock($1)")
        .bind(lock_key(SHARD))
        .fetch_one(&mut *conn)
        .await?;
    if !locked {
        let leader: Option<(String, i64)> =
            sqlx::query_as("SELECT leader_url, epoch FROM market_leader WHERE shard = $1")
                .bind(SHARD)
                .fetch_optional(&mut *conn)
                .await?;
        let (url, epoch) = leader.unzip();
        return Ok(Outcome::Following(url, epoch));
    }
    // Waits for the last batch of a replaced leader (it holds the row
    // FOR SHARE until it commits); every batch of it after this is refused.
    let epoch: i64 = sqlx::query_scalar(
        "INSERT INTO market_leader (shard, epoch, leader_url, since) VALUES ($1, 1, $2, now()) \
         ON CONFLICT (shard) DO UPDATE SET epoch = market_leader.epoch + 1, \
         leader_url = EXCLUDED.leader_url, since = EXCLUDED.since RETURNING epoch",
    )
    .bind(SHARD)
    .bind(advertise_url)
    .fetch_one(&mut *conn)
    .await?;
    Ok(Outcome::Leading(epoch))
}

/// The leader's connection still answers (and so still holds the lock).
async fn probe(conn: &mut PgConnection) -> Result<Outcome, sqlx::Error> {
    sqlx::query("SELECT 1").execute(conn).await?;
    Ok(Outcome::StillLeading)
}

/// Wakes `changes` for each commit a leader notifies, and after each
/// reconnection, since notifications sent meanwhile were missed. Ends with
/// the election (`role` closes).
async fn listen(options: PgConnectOptions, changes: Arc<Notify>, mut role: watch::Receiver<Role>) {
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(1)
        .connect_lazy_with(options);
    loop {
        let heard = async {
            let mut listener = PgListener::connect_with(&pool).await?;
            listener.listen(CHANGES_CHANNEL).await?;
            loop {
                changes.notify_one();
                // `None`: the connection was lost and is made again.
                let _ = listener.try_recv().await?;
            }
        };
        let outcome: Result<(), sqlx::Error> = tokio::select! {
            outcome = heard => outcome,
            closed = role.changed() => match closed {
                Ok(()) => continue,
                Err(_) => break,
            },
        };
        if let Err(e) = outcome {
            tracing::debug!(error = %e, "the market change listener reconnects");
        }
        tokio::time::sleep(EVERY).await;
    }
    pool.close().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_shard_has_its_own_lock_key() {
        assert_ne!(lock_key(0), lock_key(1));
        assert_eq!(lock_key(0) & 0xffff, 0);
    }
}
