//! Spin variables: application variables resolved once at start-up, component variables rendered
//! from `{{ name }}` templates over them, offered as `fermyon:spin/variables@2.0.0` (spin-sdk 5)
//! and `spin:variables/variables@3.0.0` (spin-sdk 6), as Spin v4.0.2's variables factor offers
//! both (`crates/factor-variables/src/host.rs`). Spin resolves a value on every call, through
//! its providers; this host's only providers are the manifest and `SPIN_VARIABLE_*`, both fixed
//! for the app's life, so it resolves them once.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use anyhow::{Context, bail};

use wasmtime::component::{Accessor, HasData};

use crate::bindings::{spin_variables, spin_variables_v3};
use crate::component::ComponentConfig;
use crate::manifest::{AppManifest, validate_name};

/// Resolves every application variable: an override (from `SPIN_VARIABLE_<NAME>` or the caller),
/// else the manifest default; a required variable without a value is an error.
pub fn resolve_app_variables(
    manifest: &AppManifest,
    overrides: &HashMap<String, String>,
) -> anyhow::Result<HashMap<String, String>> {
    let mut values = HashMap::new();
    for (name, decl) in &manifest.variables {
        let from_env = std::env::var(format!("SPIN_VARIABLE_{}", name.to_ascii_uppercase())).ok();
        let value = overrides
            .get(name)
            .cloned()
            .or(from_env)
            .or_else(|| decl.default.clone());
        match value {
            Some(value) => {
                values.insert(name.clone(), value);
            }
            None if decl.required => bail!(
                "variable `{name}` is required: set SPIN_VARIABLE_{} or give it a default",
                name.to_ascii_uppercase()
            ),
            None => {}
        }
    }
    for name in overrides.keys() {
        if !manifest.variables.contains_key(name) {
            bail!("variable `{name}` is set but not declared in the manifest's [variables]");
        }
    }
    Ok(values)
}

/// Renders a component's variable templates against the application variables.
pub fn render_component_variables(
    component_id: &str,
    templates: &BTreeMap<String, String>,
    app: &HashMap<String, String>,
) -> anyhow::Result<HashMap<String, String>> {
    templates
        .iter()
        .map(|(name, template)| {
            let value = render_template(template, app).with_context(|| {
                format!("component `{component_id}`: variable `{name}` = `{template}`")
            })?;
            Ok((name.clone(), value))
        })
        .collect()
}

fn render_template(template: &str, app: &HashMap<String, String>) -> anyhow::Result<String> {
    let mut out = String::new();
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after.find("}}").context("`{{` without a closing `}}`")?;
        let name = after[..end].trim();
        let value = app
            .get(name)
            .with_context(|| format!("refers to `{name}`, which has no value"))?;
        out.push_str(value);
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

/// `fermyon:spin/variables` for one request: the component's rendered variables.
pub struct VariablesCtx {
    component: Arc<ComponentConfig>,
}

impl VariablesCtx {
    /// The variables of `component`.
    pub fn new(component: Arc<ComponentConfig>) -> Self {
        VariablesCtx { component }
    }
}

impl VariablesCtx {
    /// The value of `name`, or why there is none (as `spin:variables`' two versions say it).
    fn get(&self, name: &str) -> Result<String, VariableError> {
        validate_name(name).map_err(|e| VariableError::InvalidName(e.to_string()))?;
        // In place, as Spin asks its environment provider first (see `crate::blocking`).
        crate::blocking::in_place(|| self.component.variables.get(name).cloned()).ok_or_else(|| {
            VariableError::Undefined(format!(
                "no variable `{name}` in component `{}`",
                self.component.id
            ))
        })
    }
}

/// The errors both versions of `spin:variables` name alike.
enum VariableError {
    InvalidName(String),
    Undefined(String),
}

impl spin_variables::Host for VariablesCtx {
    async fn get(
        &mut self,
        name: String,
    ) -> wasmtime::Result<Result<String, spin_variables::Error>> {
        Ok(VariablesCtx::get(self, &name).map_err(|e| match e {
            VariableError::InvalidName(m) => spin_variables::Error::InvalidName(m),
            VariableError::Undefined(m) => spin_variables::Error::Undefined(m),
        }))
    }
}

/// `spin:variables@3.0.0`, whose `get` is an `async func` (what spin-sdk 6 imports): linked
/// with the store's accessor, as Spin's `VariablesFactorData` is. The values are fixed at
/// start-up, so the call completes at once.
pub struct VariablesV3;

impl HasData for VariablesV3 {
    type Data<'a> = &'a mut VariablesCtx;
}

impl spin_variables_v3::Host for VariablesCtx {}

impl spin_variables_v3::HostWithStore for VariablesV3 {
    async fn get<T: Send>(
        accessor: &Accessor<T, Self>,
        name: String,
    ) -> wasmtime::Result<Result<String, spin_variables_v3::Error>> {
        let value = accessor.with(|mut access| access.get().get(&name));
        Ok(value.map_err(|e| match e {
            VariableError::InvalidName(m) => spin_variables_v3::Error::InvalidName(m),
            VariableError::Undefined(m) => spin_variables_v3::Error::Undefined(m),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_substitute_app_variables() {
        let app = HashMap::from([("env".to_string(), "prod".to_string())]);
        assert_eq!(render_template("{{ env }}", &app).unwrap(), "prod");
        assert_eq!(render_template("x-{{env}}-y", &app).unwrap(), "x-prod-y");
        assert_eq!(render_template("plain", &app).unwrap(), "plain");
        assert!(render_template("{{ missing }}", &app).is_err());
        assert!(render_template("{{ env", &app).is_err());
    }

    #[test]
    fn overrides_beat_defaults_and_required_needs_a_value() {
        let text = r#"
spin_manifest_version = 2
[application]
name = "t"
[variables]
mode = { default = "dev" }
secret_token = { required = true }
"#;
        let m = AppManifest::from_toml(text, std::path::Path::new(".")).unwrap();
        assert!(resolve_app_variables(&m, &HashMap::new()).is_err());
        let overrides = HashMap::from([("secret_token".to_string(), "s".to_string())]);
        let values = resolve_app_variables(&m, &overrides).unwrap();
        assert_eq!(values["mode"], "dev");
        assert_eq!(values["secret_token"], "s");
        let unknown = HashMap::from([("nope".to_string(), "x".to_string())]);
        assert!(resolve_app_variables(&m, &unknown).is_err());
    }
}
