//! What the host allows one client, one connection and one request: the defences against a
//! client that opens connections and never finishes them, a component stuck in a loop, and a
//! database that accepts connections but never answers.
//!
//! | Setting | Default | Flag | Spin v4.0.2 |
//! |---|---|---|---|
//! | [`Limits::max_connections`] | 1,000 | `--max-connections` | none |
//! | [`Limits::header_read_timeout`] | 10 s | `--header-read-timeout` | none |
//! | [`Limits::request_timeout`] | 30 s | `--request-timeout` | none |
//! | [`Limits::max_instance_memory`] | 64 MiB | `--max-instance-memory` | none unless `--max-instance-memory` |
//! | [`Limits::pg_connect_timeout`] | 1 s | `--pg-connect-timeout` | none |
//! | [`Limits::instance_reuse`] (WASIp3 only) | 128 requests, 16 at once, 1 s idle | `--max-instance-reuse-count`, `--max-instance-concurrent-reuse-count`, `--idle-instance-timeout` | the same |
//!
//! What Spin v4.0.2 does, read from its source:
//! - `crates/trigger-http/src/server.rs` serves each connection with hyper-util's `auto::Builder`
//!   and no timer, so hyper's 30 s default header-read timeout is never armed; connections are not
//!   counted, and the accept loop ends the server on the first accept error (`accept().await?`),
//!   `EMFILE` included. This host instead waits for a free slot before it accepts, so excess
//!   clients queue in the kernel's backlog, and backs off after an accept error (10 ms, doubling
//!   to 1 s) rather than retrying at once or stopping.
//! - `crates/core/src/lib.rs` turns on epoch interruption with a 10 ms tick, and
//!   `crates/core/src/store.rs` sets the deadline to `u64::MAX / 2`: no request ever reaches it
//!   (`Store::set_deadline` is only used by tests), and nothing else ends a request, so a long
//!   poll or an event stream runs as long as its component likes. The request deadline here is
//!   this host's own (the 30 s default is Akamai Functions' per-request limit), and it stops
//!   components that are stuck, not ones that wait on purpose: wall-clock until the response is
//!   set (`504`), then only a body that stops moving or guest code that has run for the whole
//!   timeout (see the `deadline` module). Tests that rely on it skip under `SPIN_BIN`.
//! - Memory: Spin's pooling allocator allows 4 GiB per memory; `spin up --max-instance-memory
//!   <bytes>` (or `SPIN_MAX_INSTANCE_MEMORY`) limits it per instance. This host takes the same
//!   flag, in the same unit. The default is sized from the components: on the bundled content,
//!   the largest memory any request of the four components grew to was 1.2 to 1.5 MiB (health,
//!   manifests, search, docs pages, overview, a 60 KB hub message; logged per request at
//!   `debug` level as "peak memory"). It grows with the largest page and the search index, so
//!   64 MiB leaves a wide margin for larger trees and stays under the 128 MiB of the smallest
//!   edge host.
//! - Shutdown: Spin aborts on Ctrl-C or SIGTERM (`crates/trigger/src/cli.rs`, `ctrlc` with its
//!   `termination` feature), dropping requests in flight. This host stops accepting, lets each
//!   connection finish the request it is serving (hyper's graceful shutdown) and closes idle ones
//!   at once; requests are bounded by the request deadline, so shutdown is too.
//! - PostgreSQL: `crates/factor-outbound-pg/src/client.rs` takes a pooled connection with no
//!   timeout, so a database that accepts TCP and never answers holds the request for good. Here
//!   making a connection (connecting and authenticating) and recycling a pooled one each give up
//!   after the connect timeout; waiting for a free slot in the pool is not bounded, as on Spin;
//!   a statement that hangs on an open connection is ended by the request deadline.
//!
//! hyper starts its header-read timer whenever a connection waits for a request head: when it
//! opens, and again when a keep-alive connection has sent its response. So the header-read
//! timeout is also the idle keep-alive timeout: a connection that sends no complete request head
//! within it is closed (hyper may first answer `408` to a half-sent head).

use std::time::Duration;

/// Limits on connections, requests and instances.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Connections served at once; more wait in the listen backlog until one closes. Matches
    /// the pooling allocator's 1,000 instances, so a full house never runs out of instance slots.
    pub max_connections: usize,
    /// How long a connection may take to send a complete request head, counted from when it
    /// opens or finished its previous response (so it is the idle keep-alive timeout too);
    /// `None`: no limit.
    pub header_read_timeout: Option<Duration>,
    /// How long a component may take to set its response (then `504`), and afterwards how
    /// long its body may go without sending a byte, or its code run in all; `None`: no limit.
    pub request_timeout: Option<Duration>,
    /// Linear memory one instance may grow to, in bytes.
    pub max_instance_memory: usize,
    /// How long making a new PostgreSQL connection, or checking a pooled one, may take.
    pub pg_connect_timeout: Duration,
    /// The largest request or response body, in bytes; `None`: no limit, as in Spin. Set by
    /// `--emulate` ([`crate::emulate`]).
    pub max_body_bytes: Option<u64>,
    /// How a WASIp3 component's instances are reused (see the host's `p3` module); a WASIp2
    /// component gets a new instance for every request, as under Spin.
    pub instance_reuse: InstanceReuse,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_connections: 1_000,
            header_read_timeout: Some(Duration::from_secs(10)),
            request_timeout: Some(Duration::from_secs(30)),
            max_instance_memory: 64 << 20,
            pg_connect_timeout: Duration::from_secs(1),
            max_body_bytes: None,
            instance_reuse: InstanceReuse::default(),
        }
    }
}

/// How long an instance lives and how many requests it takes: Spin v4.0.2's flags, with its
/// defaults for WASIp3 (`DEFAULT_WASIP3_MAX_INSTANCE_REUSE_COUNT` and its siblings).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InstanceReuse {
    /// Requests one instance serves before it is dropped (`--max-instance-reuse-count`).
    pub max_requests: usize,
    /// Requests one instance serves at once (`--max-instance-concurrent-reuse-count`).
    pub max_concurrent: usize,
    /// How long an idle instance is kept for the next request (`--idle-instance-timeout`).
    pub idle_timeout: Duration,
}

impl Default for InstanceReuse {
    fn default() -> Self {
        InstanceReuse {
            max_requests: 128,
            max_concurrent: 16,
            idle_timeout: Duration::from_secs(1),
        }
    }
}

impl Limits {
    /// How long shutdown waits for connections to finish: requests in flight end by the
    /// request deadline (30 s when there is none), and their responses get one more second.
    pub fn shutdown_timeout(&self) -> Duration {
        self.request_timeout.unwrap_or(Duration::from_secs(30)) + Duration::from_secs(1)
    }
}

/// Parses a duration written as a number and a unit: `250ms`, `10s`, `2m`; `0` alone is zero.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    if text == "0" {
        return Ok(Duration::ZERO);
    }
    let split = text
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .ok_or_else(|| format!("`{text}` needs a unit: ms, s or m (e.g. 10s)"))?;
    let (number, unit) = text.split_at(split);
    let number: f64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a number followed by ms, s or m"))?;
    let seconds = match unit {
        "ms" => number / 1000.0,
        "s" => number,
        "m" => number * 60.0,
        _ => return Err(format!("`{text}`: unknown unit `{unit}`; use ms, s or m")),
    };
    Duration::try_from_secs_f64(seconds).map_err(|e| format!("`{text}`: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_need_a_unit() {
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        for bad in ["10", "s", "-1s", "10h", "", "1e3s"] {
            assert!(parse_duration(bad).is_err(), "{bad} was accepted");
        }
    }
}
