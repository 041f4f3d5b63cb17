#!/usr/bin/env python3
"""A gpuex webhook receiver: WEBHOOK_SECRET=whsec_... python3 webhook_receiver.py [port]"""
import hashlib, hmac, os, sys, time
from http.server import BaseHTTPRequestHandler, HTTPServer

SECRET = os.environ["WEBHOOK_SECRET"].encode()

class Receiver(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        sig = dict(p.split("=", 1) for p in self.headers.get("Gpuex-Signature", "").split(",") if "=" in p)
        t = sig.get("t", "")
        mac = hmac.new(SECRET, t.encode() + b"." + body, hashlib.sha256).hexdigest()
        fresh = t.isdigit() and abs(time.time() - int(t)) < 300  # refuse replays
        ok = fresh and hmac.compare_digest(mac, sig.get("v1", ""))
        self.send_response(200 if ok else 400)
        self.end_headers()
        if ok:  # deliveries are at least once: dedupe by Gpuex-Event-Id
            print("verified", self.headers["Gpuex-Event-Id"], self.headers["Gpuex-Event-Type"], flush=True)

    def log_message(self, *args):
        pass

server = HTTPServer(("127.0.0.1", int(sys.argv[1]) if len(sys.argv) > 1 else 8000), Receiver)
print("listening on port", server.server_port, flush=True)
server.serve_forever()
