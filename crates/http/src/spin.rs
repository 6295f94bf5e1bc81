//! The two conversions a Spin component needs (feature `spin`): the host's request in, our
//! response out. Every component starts and ends with these, so all four read the request
//! (path info, query, headers) the same way.

use spin_sdk::http::{IncomingRequest, Response as SpinResponse};

use crate::exchange::Incoming;
use crate::message::Response;

/// The request's method, path, query and headers (the body is left unread: a component
/// that wants it streams it afterwards, checks first).
pub fn incoming(req: &IncomingRequest) -> Incoming {
    let headers = req
        .headers()
        .entries()
        .into_iter()
        .filter_map(|(name, value)| Some((name, String::from_utf8(value).ok()?)))
        .collect();
    Incoming::new(
        &req.method().to_string(),
        &req.path_with_query().unwrap_or_else(|| "/".to_owned()),
        headers,
    )
}

/// Spin's response for ours.
pub fn outgoing(res: Response) -> SpinResponse {
    let mut builder = SpinResponse::builder();
    builder.status(res.status);
    for (name, value) in res.headers {
        builder.header(name, value);
    }
    builder.body(res.body).build()
}
