//! The WASIp3 form (spin-sdk 6): an instance serves many requests, several at once, and keeps
//! the hub's settings for a second and its connection to the store for its whole life (see the
//! crate doc). Never the edge build, which is WASIp2.

use std::cell::RefCell;
use std::future::Future;
use std::rc::Rc;
use std::time::{Duration, Instant};

use dochub_http_wasip3::{BodyStream, SETTINGS_LIFE};
use dochub_hub::wait::{AsyncPause, BodyOut, Gathering, WaitError};
use dochub_hub_spin::{DATABASE_URL, OpenStore};
use spin_sdk::http::IntoResponse;
use spin_sdk::http::body::IncomingBodyExt;
use spin_sdk::variables;
use spin_sdk::wasip3::clocks::monotonic_clock;
use spin_sdk::wasip3::http::types;

use super::*;

/// How long a request that may wait ([`api::may_wait`]) yields before anything else. Spin hands
/// an instance another request only while its event loop is idle, and a request's first part
/// (the settings, the first read of the inbox) makes synchronous store calls: waiters that
/// arrived together each got an instance of their own, and each looked alone. Yielding first
/// lets those arriving in the same moment join one instance, up to 16, and share its looks
/// ([`Gathering`]); a long-poll that finds mail answers this much later.
const ARRIVAL_PAUSE: Duration = Duration::from_millis(5);

/// What this instance keeps between its requests.
#[derive(Default)]
struct Kept {
    /// The hub's settings and when they were read.
    settings: Option<(Instant, HubSettings)>,
    /// The open SQLite database (PostgreSQL's connections are not kept: see [`connection`]).
    sqlite: Option<OpenStore>,
}

thread_local! {
    static KEPT: RefCell<Kept> = RefCell::new(Kept::default());
    /// The instance's long-polls look at the store together: one statement for all those
    /// due at the same beat, not one each.
    static LOOKOUT: Rc<Gathering<InstancePause>> = Rc::new(Gathering::new(InstancePause));
}

/// The hub's variables, as read.
#[derive(Clone)]
struct HubSettings {
    limits: Limits,
    store: HubStore,
}

pub(crate) async fn handle(
    req: spin_sdk::http::Request,
) -> Result<types::Response, types::ErrorCode> {
    let uri = req.uri();
    if api::may_wait(req.method().as_str(), uri.path(), uri.query().unwrap_or("")) {
        InstancePause.sleep(ARRIVAL_PAUSE).await;
    }
    let admitted = match dochub_http_wasip3::admit(Surface::Hub, &req, "hub_tokens").await {
        Ok(admitted) => admitted,
        Err(refusal) => return refusal.into_response(),
    };
    let auth = hub_auth(&admitted.incoming, &admitted.settings);
    let request = match admitted_request(&admitted.incoming, &auth) {
        Ok(request) => request,
        Err(response) => return admitted.respond(response).into_response(),
    };
    let body = match read_body(&request, || req.into_body().stream()).await {
        Ok(body) => body,
        Err(response) => return admitted.respond(*response).into_response(),
    };
    let settings = match hub_settings().await {
        Ok(settings) => settings,
        Err(e) => return admitted.respond(config_error(&e)).into_response(),
    };
    let db = match connection(&settings.store) {
        Ok(db) => db,
        Err(e) => return admitted.respond(unavailable(&e)).into_response(),
    };
    let limits = settings.limits;
    let answer = api::answer(
        &Hub::with_clock(db, SystemClock, limits),
        &auth,
        &request,
        body,
    );
    match answer {
        Answer::Now(response) => {
            if response.status >= 500 {
                forget_store();
            }
            admitted.respond(response).into_response()
        }
        Answer::Later(later) if admitted.incoming.method.eq_ignore_ascii_case("HEAD") => {
            admitted.respond(later.head).into_response()
        }
        Answer::Later(later) => {
            let incoming = admitted.incoming.clone();
            let (response, body) = admitted.stream(later.head.clone());
            spin_sdk::wasip3::wit_bindgen::spawn(async move {
                // Each look takes the instance's connection as it is then: one dropped after
                // a failure is opened anew.
                let connect = || {
                    connection(&settings.store)
                        .map(|db| Hub::with_clock(db, SystemClock, limits))
                        .map_err(HubError::Unavailable)
                };
                let mut out = Out(body);
                let lookout = LOOKOUT.with(Rc::clone);
                let outcome = later
                    .run_async(&connect, &InstancePause, &*lookout, &mut out)
                    .await;
                match &outcome {
                    Ok(()) => {}
                    Err(WaitError::ClientLeft(_)) => log(
                        Surface::Hub,
                        &incoming,
                        "the client closed the connection before the whole body was sent",
                    ),
                    Err(e) => {
                        forget_store();
                        log(
                            Surface::Hub,
                            &incoming,
                            &format!("error: response body cut short: {e}"),
                        );
                    }
                }
                out.0.finish(outcome.map_err(|e| e.to_string())).await;
            });
            Ok(response)
        }
    }
}

/// The hub's variables as this instance last read them, if less than [`SETTINGS_LIFE`] ago;
/// else read now. An unreadable variable reads as empty (its default), as in the WASIp2 form;
/// a value [`Limits::from_variables`] refuses is an error, and kept by nobody.
async fn hub_settings() -> Result<HubSettings, HubError> {
    let kept = KEPT.with_borrow(|kept| match &kept.settings {
        Some((read_at, settings)) if read_at.elapsed() < SETTINGS_LIFE => Some(settings.clone()),
        _ => None,
    });
    if let Some(settings) = kept {
        return Ok(settings);
    }
    let read_at = Instant::now();
    let mut values = Vec::with_capacity(Limits::VARIABLES.len() + 1);
    for name in Limits::VARIABLES.into_iter().chain([DATABASE_URL]) {
        values.push((name, variables::get(name).await.unwrap_or_default()));
    }
    let value = |name: &str| {
        values
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, value)| value.clone())
            .unwrap_or_default()
    };
    let settings = HubSettings {
        limits: Limits::from_variables(value)?,
        store: HubStore::of_setting(&value(DATABASE_URL)),
    };
    KEPT.with_borrow_mut(|kept| kept.settings = Some((read_at, settings.clone())));
    Ok(settings)
}

/// A connection to `store`: on SQLite the instance's, opened if it has none. PostgreSQL's is
/// taken from Spin's pool at every call and not kept: an instance per sixteen open streams,
/// each holding one for its life, emptied the pool under a thousand streams, and requests
/// waited for a connection until the deadline (504).
fn connection(store: &HubStore) -> Result<OpenStore, String> {
    if let HubStore::Postgres(_) = store {
        return store.open();
    }
    if let Some(db) = KEPT.with_borrow(|kept| kept.sqlite.clone()) {
        return Ok(db);
    }
    let db = store.open()?;
    KEPT.with_borrow_mut(|kept| kept.sqlite = Some(db.clone()));
    Ok(db)
}

/// Drops the instance's connection, whose state after a failure is not known; requests that
/// still hold it finish on it.
fn forget_store() {
    KEPT.with_borrow_mut(|kept| kept.sqlite = None);
}

/// [`AsyncPause`] on WASI's monotonic clock: a waiting request yields the instance to its
/// other requests.
struct InstancePause;

impl AsyncPause for InstancePause {
    fn monotonic(&self) -> Duration {
        Duration::from_nanos(monotonic_clock::now())
    }

    fn sleep(&self, duration: Duration) -> impl Future<Output = ()> {
        monotonic_clock::wait_for(u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX))
    }
}

/// The response's body as the wait's [`BodyOut`].
struct Out(BodyStream);

impl BodyOut for Out {
    fn write_flush(&mut self, bytes: &[u8]) -> impl Future<Output = std::io::Result<()>> {
        self.0.write(bytes)
    }
}
