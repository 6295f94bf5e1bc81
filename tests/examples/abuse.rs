//! Measures what an abusive client can do to a running host (`dochub-host` or `spin up`).
//!
//! ```text
//! cargo run --example abuse -- hold <host:port> <connections> <seconds>
//! cargo run --example abuse -- latency <url> <requests>
//! ```
//!
//! `hold` opens the connections, sends each half a request head, and prints every few seconds
//! how many the server has not closed yet. `latency` times sequential GETs of a URL (e.g.
//! `/api/health` with `database_url` pointing at a database that never answers).

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["hold", addr, connections, seconds] => {
            hold(addr.parse()?, connections.parse()?, seconds.parse()?).await
        }
        ["latency", url, requests] => latency(url, requests.parse()?).await,
        _ => anyhow::bail!(
            "usage: abuse hold <host:port> <connections> <seconds> | abuse latency <url> <requests>"
        ),
    }
}

async fn hold(addr: SocketAddr, connections: usize, seconds: u64) -> anyhow::Result<()> {
    let started = Instant::now();
    let mut open = Vec::new();
    let mut failed = 0;
    for _ in 0..connections {
        let connected =
            tokio::time::timeout(Duration::from_secs(2), TcpStream::connect(addr)).await;
        match connected {
            Ok(Ok(mut stream)) => {
                if stream
                    .write_all(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
                    .await
                    .is_ok()
                {
                    open.push(stream);
                } else {
                    failed += 1;
                }
            }
            _ => failed += 1,
        }
    }
    println!(
        "{} connections established with half a request head ({failed} not established) in {:.1} s",
        open.len(),
        started.elapsed().as_secs_f64()
    );
    let until = started + Duration::from_secs(seconds);
    loop {
        tokio::time::sleep(Duration::from_secs(2)).await;
        // A closed connection reads as end of file (or an error); an open one would block.
        open.retain(|stream| {
            let mut byte = [0u8; 64];
            matches!(stream.try_read(&mut byte), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock)
        });
        println!(
            "t = {:>4.1} s: {} still open",
            started.elapsed().as_secs_f64(),
            open.len()
        );
        if Instant::now() >= until || open.is_empty() {
            return Ok(());
        }
    }
}

async fn latency(url: &str, requests: usize) -> anyhow::Result<()> {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(120))
        .build()?;
    for _ in 0..requests {
        let started = Instant::now();
        let outcome = match client.get(url).send().await {
            Ok(res) => format!("{} {}", res.status(), res.text().await.unwrap_or_default()),
            Err(e) => format!("error: {e}"),
        };
        println!("{:>7.3} s  {outcome}", started.elapsed().as_secs_f64());
    }
    Ok(())
}
