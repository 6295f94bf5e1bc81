//! What the host knows of one component of the app: resolved once at start-up, shared by every
//! request's interface contexts.

use std::collections::HashMap;
use std::path::PathBuf;

/// A component's configuration, resolved once at start-up.
#[derive(Debug, Clone, Default)]
pub struct ComponentConfig {
    /// The component id.
    pub id: String,
    /// Key-value labels it may open.
    pub key_value_stores: Vec<String>,
    /// SQLite database labels it may open.
    pub sqlite_databases: Vec<String>,
    /// Outbound hosts it may reach.
    pub allowed_outbound_hosts: Vec<String>,
    /// Its variables, rendered.
    pub variables: HashMap<String, String>,
    /// Its environment.
    pub environment: Vec<(String, String)>,
    /// Read-only directory mounts: host directory, guest path.
    pub mounts: Vec<(PathBuf, String)>,
}
