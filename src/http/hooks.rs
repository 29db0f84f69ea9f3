//! The hook endpoints (spec "Hooks"; issue 12):
//!
//! - `POST /api/hooks/tool-call` `{tool_name, input?, session_key?}` →
//!   `{decision: allow|deny|ask|defer, reason, matched, updated_input?,
//!   context, scripts}`: asked by the gateway before every tool call.
//! - `POST /api/hooks/message` `{text, session_key?}` → `{auto_reply?,
//!   blocked, reason?, text, context[], matched, scripts}`: asked with every
//!   user message (auto-reply → transform → context rules → script hooks).
//! - `GET /api/hooks`: the rules, the parsed script hooks, their warnings,
//!   reload errors, and the raw hooks.json document.
//! - `PUT /api/hooks` `{rules?, hooks_json?}`: replaces config.json's
//!   `hooks` section and/or hooks.json, each validated first and written
//!   atomically; the runner reloads at once. `hooks_json` (script hooks:
//!   shell commands run as the daemon's user) is refused with 403
//!   `remote_scripts_disabled` unless `hooks.remote_scripts` is on, which
//!   only the person at the machine can turn on (403
//!   `remote_scripts_locked` for `rules` that would change it; likewise
//!   `sandbox_locked` for `hooks.sandbox`).
//! - `POST /api/hooks/test` `{event, index?, payload?}`: runs one
//!   configured script hook with a sample (or the given) event; the
//!   answer's `outcome.sandbox` says which sandbox layers held (`mode`,
//!   `layers`, `missing`, `refused`).
//!
//! Every change of the script hooks in force and every test run is a
//! security event naming the command's hash (`hook_script_change`,
//! `hook_script_test`), whichever surface made it.

use actix_web::{web, HttpResponse};
use serde::Deserialize;
use serde_json::{json, Value};

use super::resource::resource;
use crate::app::AppState;
use crate::error::ApiError;
use kirocrew_actors::hooks::{merge_kiro_hooks, HookRules, MessageEvent, ToolCall};
use kirocrew_actors::security_log::SecurityEvent;

/// Registers the hook routes.
pub fn config_hooks(cfg: &mut web::ServiceConfig) {
    cfg.service(
        resource("/hooks")
            .route(web::get().to(list))
            .route(web::put().to(replace)),
    )
    .service(resource("/hooks/tool-call").route(web::post().to(tool_call)))
    .service(resource("/hooks/message").route(web::post().to(message)))
    .service(resource("/hooks/test").route(web::post().to(test)));
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolCallBody {
    tool_name: String,
    #[serde(default)]
    input: Value,
    session_key: Option<String>,
}

async fn tool_call(
    state: web::Data<AppState>,
    body: web::Json<ToolCallBody>,
) -> Result<HttpResponse, ApiError> {
    let body = body.into_inner();
    let decision = state
        .hooks
        .decide_tool_call(ToolCall {
            tool_name: body.tool_name,
            input: body.input,
            session_key: body.session_key,
            actor: "http".into(),
        })
        .await?;
    Ok(HttpResponse::Ok().json(decision))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MessageBody {
    text: String,
    session_key: Option<String>,
}

async fn message(
    state: web::Data<AppState>,
    body: web::Json<MessageBody>,
) -> Result<HttpResponse, ApiError> {
    let body = body.into_inner();
    let decision = state
        .hooks
        .decide_message(MessageEvent {
            text: body.text,
            session_key: body.session_key,
            actor: "http".into(),
        })
        .await?;
    Ok(HttpResponse::Ok().json(decision))
}

async fn list(state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    let (listing, raw) = state.hooks.list().await?;
    let mut body = serde_json::to_value(listing).map_err(|e| ApiError::internal("encode", &e))?;
    // agent.kiro_hooks merged after the bundled ones (spec "User kiro-cli
    // Hooks"), commands judged by the same sensitive-path policy as reads.
    let policy = state.safe_reader.policy();
    let merged = merge_kiro_hooks(
        &bundled_kiro_hooks(),
        &state.settings.agent.kiro_hooks,
        &|p: &std::path::Path| policy.is_sensitive(p),
    );
    if let Some(fields) = body.as_object_mut() {
        fields.insert("hooks_json".into(), raw);
        fields.insert(
            "kiro_hooks".into(),
            json!({"hooks": merged.hooks, "warnings": merged.warnings}),
        );
    }
    Ok(HttpResponse::Ok().json(body))
}

/// The bundled kiro-cli hooks: `agent.kiro_hooks` of the compiled-in
/// defaults (always present, always first).
fn bundled_kiro_hooks() -> serde_json::Map<String, Value> {
    crate::config::default_value("agent.kiro_hooks")
        .and_then(|v| v.as_object().cloned())
        .unwrap_or_default()
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ReplaceBody {
    rules: Option<Value>,
    hooks_json: Option<Value>,
}

async fn replace(
    state: web::Data<AppState>,
    body: web::Json<ReplaceBody>,
) -> Result<HttpResponse, ApiError> {
    let body = body.into_inner();
    if body.rules.is_none() && body.hooks_json.is_none() {
        return Err(ApiError::validation(
            "nothing_to_change",
            "send \"rules\" (config.json hooks), \"hooks_json\" (script hooks) or both",
        ));
    }
    let in_force = state.hooks.list().await?.0.rules;
    let remote_scripts = in_force.remote_scripts;
    if body.hooks_json.is_some() && !remote_scripts {
        state.security_log.record_later(SecurityEvent::new(
            "hook_script_change",
            "http",
            "refused",
            json!({"reason": "hooks.remote_scripts is off"}),
        ));
        return Err(ApiError::Forbidden {
            code: "remote_scripts_disabled",
            message: "script hooks run shell commands as the daemon's user, so they are \
                installed at the machine by editing hooks.json; to allow it over the API, \
                set hooks.remote_scripts to true there"
                .into(),
        });
    }
    if let Some(mut rules) = body.rules {
        // Absent, a switch keeps its value (replacing the rules never
        // turns it off behind the operator's back); present, it must not
        // change. `sandbox` likewise: loosening the script-hook sandbox is
        // for the person at the machine.
        let locked = [
            (
                "remote_scripts",
                json!(remote_scripts),
                "remote_scripts_locked",
            ),
            ("sandbox", json!(in_force.sandbox), "sandbox_locked"),
        ];
        for (key, current, code) in locked {
            match rules.get(key) {
                Some(asked) if *asked != current => {
                    return Err(ApiError::Forbidden {
                        code,
                        message: format!(
                            "hooks.{key} is changed at the machine (config.json or \
                             `kirocrew config set`), not over the API"
                        ),
                    });
                }
                Some(_) => {}
                None => {
                    if let Some(fields) = rules.as_object_mut() {
                        fields.insert(key.into(), current);
                    }
                }
            }
        }
        // Typed check first, so the error names the field.
        let typed: HookRules = serde_json::from_value(rules.clone())
            .map_err(|e| ApiError::validation("invalid_hooks", e.to_string()))?;
        typed
            .validate()
            .map_err(|e| ApiError::validation("invalid_hooks", e))?;
        crate::config::set_section(state.home.root(), "hooks", rules)
            .map_err(ApiError::from_config)?;
        state.hooks.reload().await?;
    }
    let warnings = match body.hooks_json {
        Some(doc) => state.hooks.save_scripts(doc, "http").await?,
        None => Vec::new(),
    };
    let (listing, raw) = state.hooks.list().await?;
    Ok(HttpResponse::Ok().json(json!({
        "ok": true,
        "warnings": warnings,
        "rules": listing.rules,
        "scripts": listing.scripts,
        "hooks_json": raw,
    })))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TestBody {
    event: String,
    #[serde(default)]
    index: usize,
    payload: Option<Value>,
}

async fn test(
    state: web::Data<AppState>,
    body: web::Json<TestBody>,
) -> Result<HttpResponse, ApiError> {
    let body = body.into_inner();
    if let Some(p) = &body.payload {
        if !p.is_object() {
            return Err(ApiError::validation(
                "invalid_payload",
                "payload must be a JSON object (the hook event)",
            ));
        }
    }
    let report = state
        .hooks
        .test_hook(&body.event, body.index, body.payload, "http")
        .await?;
    Ok(HttpResponse::Ok().json(report))
}
