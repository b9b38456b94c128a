//! A stranger's HTTP server on loopback, for the attack suites: it answers every request the
//! same way and records what it was sent.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What a stranger's server answers, and what it saw.
pub struct Listener {
    pub port: u16,
    connections: Arc<AtomicUsize>,
    received: Arc<Mutex<Vec<u8>>>,
}

impl Listener {
    /// Listens on 127.0.0.1 (a port the test allowlist allows) and answers every request with
    /// `status` and `body`.
    pub fn start(status: &'static str, body: &str) -> Listener {
        Listener::answering(status, "content-type: application/json\r\n", body)
    }

    /// Like [`Listener::start`], with `headers` (each ending in CRLF) instead of the JSON one.
    pub fn answering(status: &'static str, headers: &str, body: &str) -> Listener {
        let socket = TcpListener::bind("127.0.0.1:0").expect("a local port");
        let port = socket.local_addr().unwrap().port();
        let connections = Arc::new(AtomicUsize::new(0));
        let received = Arc::new(Mutex::new(Vec::new()));
        let answer = format!(
            "HTTP/1.1 {status}\r\n{headers}content-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        let (count, seen) = (connections.clone(), received.clone());
        std::thread::spawn(move || {
            for stream in socket.incoming() {
                let Ok(mut stream) = stream else { continue };
                count.fetch_add(1, Ordering::SeqCst);
                let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
                let mut request = Vec::new();
                let mut buf = [0u8; 4096];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => request.extend_from_slice(&buf[..n]),
                    }
                }
                seen.lock().unwrap().extend_from_slice(&request);
                let _ = stream.write_all(answer.as_bytes());
            }
        });
        Listener {
            port,
            connections,
            received,
        }
    }

    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }

    pub fn saw(&self, text: &str) -> bool {
        String::from_utf8_lossy(&self.received.lock().unwrap()).contains(text)
    }
}
