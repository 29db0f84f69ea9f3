//! The MCP server inside the daemon: one [`KirocrewMcp`] per MCP session,
//! serving the tool set of [`super::calls`] and every skill as a
//! `skill://<name>` resource. Both transports end here: Streamable HTTP at
//! `/mcp` directly, stdio through `kirocrew mcp`, which forwards to `/mcp`
//! (the daemon stays the one owner of memory.db and the index).
//!
//! Tools are listed and dispatched from one table rather than rmcp's
//! `#[tool]` macros, so that arguments are decoded here: a bad argument
//! (missing, mistyped, unknown field) is an MCP *tool* error
//! (`isError: true`, `{"error": {code, message}}`), which the agent reads
//! and can fix, never a JSON-RPC failure. Refusals from the writers carry
//! the same stable codes as the HTTP API.

use std::sync::Arc;

use rmcp::handler::server::common::schema_for_type;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, Resource, ResourceContents, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use super::calls::{self, Caller};
use super::params::*;
use crate::app::AppState;
use crate::error::ApiError;

/// The URI scheme of skill resources.
pub const SKILL_SCHEME: &str = "skill://";

/// One MCP session's server.
#[derive(Clone)]
pub struct KirocrewMcp {
    state: AppState,
}

impl KirocrewMcp {
    /// A server over the daemon's state.
    pub fn new(state: AppState) -> Self {
        Self { state }
    }
}

/// The tools: name, the one-line description an agent reads, its schema.
fn tools() -> Vec<Tool> {
    fn tool<T: JsonSchema + 'static>(name: &'static str, description: &'static str) -> Tool {
        Tool::new(name, description, schema_for_type::<T>())
    }
    vec![
        tool::<MemorySearch>(
            "memory_search",
            "Search long-term memory (facts, past episodes, memory files) and get one ranked list with each hit's source and score parts.",
        ),
        tool::<MemoryRemember>(
            "memory_remember",
            "Store a durable fact under a key (pref.*, project.*, user.*) with your confidence; refused if unsure, unsafe or outranked by what the user said.",
        ),
        tool::<MemoryForget>("memory_forget", "Forget a stored fact by its key."),
        tool::<EpisodeAdd>(
            "episode_add",
            "Record something that happened (an event, decision or outcome) as an episodic memory.",
        ),
        tool::<LearnAdd>(
            "learn_add",
            "Save a correction the user gave (\"from now on do X, not Y\") so every future session follows it.",
        ),
        tool::<LearnList>("learn_list", "List the learned corrections in force."),
        tool::<LearnRemove>(
            "learn_remove",
            "Remove an outdated learned correction by its key (from learn_list) when the user agrees.",
        ),
        tool::<SkillSearch>(
            "skill_search",
            "Find installed skills by name, description or trigger words.",
        ),
        tool::<SkillRead>(
            "skill_read",
            "Read a skill's instructions (the SKILL.md body) by name.",
        ),
        tool::<ContextPreview>(
            "context_preview",
            "Show the context kirocrew would give a session starting with a message, and a receipt of what went in and what was left out.",
        ),
    ]
}

/// The client's name and version from the initialize handshake.
fn caller(context: &RequestContext<RoleServer>) -> Caller {
    match context.peer.peer_info() {
        Some(info) => Caller::from_client_info(&info.client_info.name, &info.client_info.version),
        None => Caller::from_client_info("", ""),
    }
}

/// The tool error an agent sees.
fn tool_error(code: &str, message: String) -> CallToolResult {
    CallToolResult::structured_error(json!({"error": {"code": code, "message": message}}))
}

impl From<ApiError> for CallToolResult {
    fn from(err: ApiError) -> Self {
        // Held for review is an outcome, not a failure: the agent should
        // not retry it, and it is told the text is out of its prompts.
        if let ApiError::Quarantined {
            id,
            rule,
            category,
            message,
        } = &err
        {
            return CallToolResult::structured(json!({
                "outcome": "quarantined",
                "id": id,
                "rule": rule,
                "category": category,
                "message": format!("{message}; it stays out of every prompt until a person releases it"),
            }));
        }
        let message = err.public_message(None);
        if err.is_server_error() {
            tracing::error!(code = err.code(), error = %crate::error::cause_chain(&err), "MCP tool failed");
        }
        tool_error(err.code(), message)
    }
}

/// The tool's arguments, or the `invalid_arguments` tool error (boxed: a
/// result is large and this is the rare path).
fn decode<T: DeserializeOwned>(
    arguments: Option<rmcp::model::JsonObject>,
) -> Result<T, Box<CallToolResult>> {
    let args = Value::Object(arguments.unwrap_or_default());
    serde_json::from_value(args).map_err(|e| {
        Box::new(tool_error(
            "invalid_arguments",
            format!("invalid arguments: {e}"),
        ))
    })
}

/// Runs one tool; every failure is a tool result.
async fn dispatch(
    state: &AppState,
    caller: &Caller,
    name: &str,
    args: Option<rmcp::model::JsonObject>,
) -> CallToolResult {
    macro_rules! run {
        ($call:expr) => {
            match $call.await {
                Ok(value) => CallToolResult::structured(value),
                Err(err) => CallToolResult::from(err),
            }
        };
    }
    macro_rules! args {
        () => {
            match decode(args) {
                Ok(a) => a,
                Err(result) => return *result,
            }
        };
    }
    match name {
        "memory_search" => run!(calls::memory_search(state, args!())),
        "memory_remember" => run!(calls::memory_remember(state, caller, args!())),
        "memory_forget" => run!(calls::memory_forget(state, caller, args!())),
        "episode_add" => run!(calls::episode_add(state, caller, args!())),
        "learn_add" => run!(calls::learn_add(state, caller, args!())),
        "learn_remove" => run!(calls::learn_remove(state, caller, args!())),
        "learn_list" => {
            let LearnList {} = args!();
            run!(calls::learn_list(state))
        }
        "skill_search" => run!(calls::skill_search(state, args!())),
        "skill_read" => run!(calls::skill_read(state, args!())),
        "context_preview" => run!(calls::context_preview(state, args!())),
        other => tool_error("unknown_tool", format!("no tool named {other:?}")),
    }
}

impl ServerHandler for KirocrewMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
        .with_server_info(Implementation::new("kirocrew", env!("CARGO_PKG_VERSION")))
        .with_instructions(
            "kirocrew is this agent's long-term memory, learned corrections and skills. \
             Search memory before asking the user something they may have told you; \
             remember durable facts; save corrections with learn_add; read skills with skill_read.",
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let caller = caller(&context);
        let state = self.state.clone();
        let result =
            on_actix(
                async move { dispatch(&state, &caller, &request.name, request.arguments).await },
            )
            .await?;
        Ok(result.into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let handle = self.state.skills.clone();
        let skills = on_actix(async move { handle.list().await })
            .await?
            .map_err(|e| McpError::internal_error(format!("skills unavailable: {e}"), None))?;
        let resources: Vec<Resource> = skills
            .into_iter()
            .map(|s| {
                let resource = Resource::new(format!("{SKILL_SCHEME}{}", s.name), s.name.clone())
                    .with_mime_type("text/markdown");
                match &s.description {
                    Some(d) => resource.with_description(d.clone()),
                    None => resource,
                }
            })
            .collect();
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let uri = request.uri;
        let Some(name) = uri.strip_prefix(SKILL_SCHEME).filter(|n| !n.is_empty()) else {
            return Err(McpError::resource_not_found(
                format!("{uri} is not a skill:// resource"),
                Some(json!({"uri": uri})),
            ));
        };
        // Reading the resource is using the skill, as skill_read is.
        let (handle, wanted) = (self.state.skills.clone(), name.to_owned());
        match on_actix(async move { handle.deliver(&wanted).await }).await? {
            Ok(body) => {
                Ok(ReadResourceResult::new(vec![ResourceContents::text(body.body, uri)]).into())
            }
            Err(kirocrew_actors::skills::SkillError::NotFound(_)) => {
                Err(McpError::resource_not_found(
                    format!("no skill named {name:?}"),
                    Some(json!({"uri": uri})),
                ))
            }
            Err(e) => Err(McpError::internal_error(
                format!("skill unreadable: {e}"),
                None,
            )),
        }
    }
}

/// Runs `work` in the actix context of this worker thread. rmcp drives
/// each session in a plain tokio task, outside actix's `LocalSet`, and
/// actor-side code may `actix::spawn` (the query embed's background
/// completion does): there that panics and the request is never answered.
/// The worker's arbiter runs the future where actix code belongs and hands
/// the result back.
async fn on_actix<T, F>(work: F) -> Result<T, McpError>
where
    F: std::future::Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    let Some(arbiter) = actix_rt::Arbiter::try_current() else {
        // Not on an actix thread (nothing here needs the bridge).
        return Ok(work.await);
    };
    let (tx, rx) = tokio::sync::oneshot::channel();
    let queued = arbiter.spawn(async move {
        let _ = tx.send(work.await);
    });
    if !queued {
        return Err(McpError::internal_error(
            "the daemon is shutting down",
            None,
        ));
    }
    rx.await
        .map_err(|_| McpError::internal_error("the request was dropped by the daemon", None))
}

/// A shared factory for transports that make one server per session.
pub fn factory(
    state: AppState,
) -> Arc<dyn Fn() -> Result<KirocrewMcp, std::io::Error> + Send + Sync> {
    Arc::new(move || Ok(KirocrewMcp::new(state.clone())))
}
