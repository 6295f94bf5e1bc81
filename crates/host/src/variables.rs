//! Spin variables: application variables resolved once at start-up, component variables rendered
//! from `{{ name }}` templates over them.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use anyhow::{Context, bail};

use crate::bindings::spin_variables;
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

impl spin_variables::Host for VariablesCtx {
    async fn get(
        &mut self,
        name: String,
    ) -> wasmtime::Result<Result<String, spin_variables::Error>> {
        if let Err(e) = validate_name(&name) {
            return Ok(Err(spin_variables::Error::InvalidName(e.to_string())));
        }
        Ok(self.component.variables.get(&name).cloned().ok_or_else(|| {
            spin_variables::Error::Undefined(format!(
                "no variable `{name}` in component `{}`",
                self.component.id
            ))
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
