//! `kirocrew mcp`: the MCP server on stdin/stdout for clients that spawn a
//! command (Claude Code, Claude Desktop, Cursor, Codex, kiro-cli). It is a
//! thin forwarder to the running daemon's `/mcp`, so there is one tool set
//! and the daemon stays the one owner of memory.db and the index: every
//! request is passed through rmcp's Streamable HTTP client unchanged and
//! every answer (tool errors included) comes back unchanged.
//!
//! The upstream session is opened when the client initializes, with the
//! client's own name and version, so the daemon's audit events name the
//! real agent rather than this proxy.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, ClientConfig,
    InitializeRequestParams, InitializeResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::{RequestContext, RunningService, ServiceError};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ErrorData as McpError, RoleClient, RoleServer, ServerHandler, ServiceExt};
use tokio::sync::OnceCell;

/// The daemon session, once the client has initialized.
type Upstream = RunningService<RoleClient, ClientConfig>;

/// The stdio side of the proxy.
#[derive(Clone)]
pub struct Proxy {
    url: String,
    token: Option<String>,
    upstream: Arc<OnceCell<Upstream>>,
}

impl Proxy {
    /// A proxy to the daemon's `/mcp` at `url` (with its bearer token).
    pub fn new(url: String, token: Option<String>) -> Self {
        Self {
            url,
            token,
            upstream: Arc::new(OnceCell::new()),
        }
    }

    async fn connect(&self, client: &InitializeRequestParams) -> Result<&Upstream, McpError> {
        self.upstream
            .get_or_try_init(|| async {
                let mut config = StreamableHttpClientTransportConfig::with_uri(self.url.clone());
                if let Some(token) = &self.token {
                    config = config.auth_header(token.clone());
                }
                let transport = StreamableHttpClientTransport::from_config(config);
                let info =
                    ClientConfig::new(ClientCapabilities::default(), client.client_info.clone());
                info.serve(transport).await.map_err(|e| {
                    McpError::internal_error(format!("kirocrew daemon at {}: {e}", self.url), None)
                })
            })
            .await
    }

    fn session(&self) -> Result<&Upstream, McpError> {
        self.upstream
            .get()
            .ok_or_else(|| McpError::invalid_request("initialize first", None))
    }

    /// Closes the daemon session: waits for the session's end (the
    /// transport's DELETE) when this is the last holder, else only signals
    /// it, since a clone still held elsewhere keeps the session alive.
    pub async fn close(self) {
        match Arc::try_unwrap(self.upstream) {
            Ok(cell) => {
                if let Some(upstream) = cell.into_inner() {
                    let _ = upstream.cancel().await;
                }
            }
            Err(shared) => {
                if let Some(upstream) = shared.get() {
                    upstream.cancellation_token().cancel();
                }
            }
        }
    }
}

/// A daemon failure as the client sees it: the daemon's own MCP error
/// unchanged, anything else (daemon gone, transport) as an internal error
/// naming the daemon.
fn upstream_error(err: ServiceError) -> McpError {
    match err {
        ServiceError::McpError(e) => e,
        other => McpError::internal_error(format!("kirocrew daemon: {other}"), None),
    }
}

impl ServerHandler for Proxy {
    fn get_info(&self) -> ServerConfig {
        let upstream = self.upstream.get().and_then(|u| u.peer().peer_info());
        let Some(daemon) = upstream else {
            return ServerConfig::new(
                ServerCapabilities::builder()
                    .enable_tools()
                    .enable_resources()
                    .build(),
            );
        };
        // The daemon's capabilities, identity and instructions, verbatim.
        let mut info = ServerConfig::new(daemon.capabilities.clone());
        if let Some(server) = &daemon.server_info {
            info = info.with_server_info(server.clone());
        }
        if let Some(instructions) = &daemon.instructions {
            info = info.with_instructions(instructions.clone());
        }
        info
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        context.peer.set_peer_info(request.clone());
        self.connect(&request).await?;
        self.negotiate_initialize(&request)
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        self.session()?
            .peer()
            .list_tools(request)
            .await
            .map_err(upstream_error)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        self.session()?
            .peer()
            .call_tool_once(request)
            .await
            .map_err(upstream_error)
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        self.session()?
            .peer()
            .list_resources(request)
            .await
            .map_err(upstream_error)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        self.session()?
            .peer()
            .read_resource_once(request)
            .await
            .map_err(upstream_error)
    }
}

/// Serves the proxy on this process's stdin/stdout until the client
/// closes it.
pub async fn serve_stdio(proxy: Proxy) -> anyhow::Result<()> {
    let running = proxy.clone().serve(rmcp::transport::stdio()).await?;
    let reason = running.waiting().await;
    tracing::debug!(?reason, "MCP client closed stdio");
    proxy.close().await;
    Ok(())
}
