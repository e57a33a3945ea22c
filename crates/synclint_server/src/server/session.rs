//! The server's state and what each message does to it: the open documents with their latest
//! reports, the settings, and when the next project pass is due.
//!
//! An edit is answered by a quick check of the edited file (see [`super::analysis`]); a project
//! pass over every open file follows once the edits pause, in a thread of its own, and
//! refreshes what the edit changed for the other open files.
//!
//! Edits that come faster than checks are applied as they come, but only the newest text is
//! checked: after each message the session takes every message already waiting, then checks
//! each document whose text changed, takes what came during that check, and so on; only once
//! nothing waits and every document's check is of its current text are diagnostics sent. A
//! check of a version that a newer one replaced while it ran is never shown.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, at, never, select};
use lsp_server::ErrorCode;
use lsp_types::notification::{
    DidChangeTextDocument, DidChangeWatchedFiles, DidCloseTextDocument, DidOpenTextDocument, DidSaveTextDocument,
    Initialized, LogMessage, LogTrace, Notification as _, PublishDiagnostics, SetTrace, ShowMessage,
};
use lsp_types::request::{
    CodeActionRequest, DocumentDiagnosticRequest, HoverRequest, Initialize, RegisterCapability, Request as _, Shutdown,
    WorkspaceDiagnosticRefresh,
};
use lsp_types::{
    CodeActionKind, CodeActionOptions, CodeActionProviderCapability, Diagnostic, DiagnosticOptions,
    DiagnosticServerCapabilities, DidChangeWatchedFilesRegistrationOptions, DocumentDiagnosticReport,
    DocumentDiagnosticReportResult, FileSystemWatcher, FullDocumentDiagnosticReport, GlobPattern,
    HoverProviderCapability, InitializeParams, InitializeResult, LogMessageParams, LogTraceParams, MessageType,
    PositionEncodingKind, PublishDiagnosticsParams, Registration, RegistrationParams,
    RelatedFullDocumentDiagnosticReport, ServerCapabilities, ServerInfo, SetTraceParams, ShowMessageParams,
    TextDocumentSyncCapability, TextDocumentSyncKind, TextDocumentSyncOptions, TextDocumentSyncSaveOptions, TraceValue,
    Uri,
};
use rustc_hash::FxHashMap;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::actions::{FIX_ALL, code_actions};
use super::analysis::{PassOutcome, PassRequest, ProjectContext, Report, Target, quick_check};
use super::diagnostics::{SOURCE, diagnostics};
use super::documents::Document;
use super::hover::hover;
use super::jsonrpc::{self, Incoming};
use super::settings::ServerOptions;
use super::uri;
use crate::config::Resolver;
use crate::linter::decode;
use crate::parse::SourceKind;
use crate::project::modules::{ModulePaths, display_path};

/// How long edits must pause before a project pass: typing starts none.
const PASS_DELAY_AFTER_EDIT: Duration = Duration::from_millis(300);

/// What the client can do.
#[derive(Default)]
struct Client {
    /// It asks for diagnostics (`textDocument/diagnostic`) instead of being sent them.
    pulls_diagnostics: bool,
    /// It can be told to ask again (`workspace/diagnostic/refresh`).
    refreshes_diagnostics: bool,
    /// It watches files for the server once asked to.
    watches_files: bool,
}

/// The folder the editor opened, and the settings and cache of its files.
struct Workspace {
    root: PathBuf,
    resolver: Arc<Resolver>,
    cache: Option<PathBuf>,
}

struct OpenDocument {
    document: Document,
    target: Target,
    /// The file it is; `None` for a buffer with no file, which is checked alone.
    file: Option<PathBuf>,
    /// The check of the document's current text; `None` where checking failed.
    report: Option<Report>,
    /// What the last project pass concluded about the file.
    context: Option<ProjectContext>,
    /// The diagnostics last sent (or, to a client that pulls them, last computed).
    shown: Option<Shown>,
    /// `report` is of an older text (or of older settings): checked again once the messages
    /// waiting are taken.
    stale: bool,
    /// `report` is newer than `shown`: shown once nothing waits.
    unshown: bool,
}

/// Diagnostics shown, and the version of the document they are of.
struct Shown {
    version: i32,
    diagnostics: Vec<Diagnostic>,
}

/// The project passes: the one running and the next.
#[derive(Default)]
struct Passes {
    /// When the next pass starts.
    due: Option<Instant>,
    /// When the running pass started, and the version of each open file it checks; `None`
    /// while none runs.
    running: Option<(Instant, FxHashMap<PathBuf, i32>)>,
}

/// Whether the server goes on after a message, or exits with a code.
pub enum Flow {
    Continue,
    Exit(u8),
}

pub struct Session<'a> {
    options: &'a ServerOptions,
    outgoing: Sender<String>,
    passes_to_run: Sender<PassRequest>,
    /// `None` until `initialize`.
    workspace: Option<Workspace>,
    shut_down: bool,
    client: Client,
    documents: FxHashMap<Uri, OpenDocument>,
    module_paths: ModulePaths,
    passes: Passes,
    /// The configuration errors last shown, not to repeat them after every pass.
    config_errors: Vec<String>,
    next_request: i32,
    /// How much the client asked the server to trace (`$/logTrace`): each quick check.
    trace: TraceValue,
    /// A document was closed since memory was last handed back: once no pass is due, what it
    /// held is free, and the allocator is told to return it (an idle server makes no call that
    /// would).
    released: bool,
}

impl<'a> Session<'a> {
    pub fn new(options: &'a ServerOptions, outgoing: Sender<String>, passes_to_run: Sender<PassRequest>) -> Self {
        Session {
            options,
            outgoing,
            passes_to_run,
            workspace: None,
            shut_down: false,
            client: Client::default(),
            documents: FxHashMap::default(),
            module_paths: ModulePaths::default(),
            passes: Passes::default(),
            config_errors: Vec::new(),
            next_request: 0,
            trace: TraceValue::Off,
            released: false,
        }
    }

    /// Handles messages and finished project passes until `exit`, or until the input ends;
    /// the exit code.
    pub fn run(&mut self, incoming: &Receiver<Incoming>, passes_done: &Receiver<PassOutcome>) -> u8 {
        loop {
            let next_pass = match (&self.passes.running, self.passes.due) {
                (None, Some(due)) => at(due),
                _ => never(),
            };
            let flow = select! {
                recv(incoming) -> input => match input {
                    Ok(input) => self.handle(input),
                    // The input ended without `exit`.
                    Err(_) => Flow::Exit(1),
                },
                recv(passes_done) -> outcome => {
                    if let Ok(outcome) = outcome {
                        self.pass_done(outcome);
                    }
                    Flow::Continue
                }
                recv(next_pass) -> _ => {
                    self.start_pass();
                    Flow::Continue
                }
            };
            if let Flow::Exit(code) = flow {
                return code;
            }
            if let Flow::Exit(code) = self.settle(incoming) {
                return code;
            }
        }
    }

    /// Catches up with the input: takes every message waiting, checks a document whose text
    /// changed, takes what came meanwhile, and so on until every check is of its document's
    /// current text; then shows what is due. Keystrokes that come faster than checks are
    /// thus applied together, and only the newest text is checked and shown.
    fn settle(&mut self, incoming: &Receiver<Incoming>) -> Flow {
        loop {
            while let Ok(input) = incoming.try_recv() {
                if let Flow::Exit(code) = self.handle(input) {
                    return Flow::Exit(code);
                }
            }
            let Some(document_uri) = self.next_stale() else {
                break;
            };
            self.check(&document_uri);
        }
        self.show_due();
        if self.released && self.passes.running.is_none() && self.passes.due.is_none() {
            self.released = false;
            crate::arena::return_free_memory();
        }
        Flow::Continue
    }

    pub fn handle(&mut self, message: Incoming) -> Flow {
        match message {
            Incoming::Request { id, method, params } => {
                // Answers are about the text as it is now.
                self.check_stale();
                let result = self.request(&method, params);
                self.send_text(jsonrpc::response(&id, result));
            }
            Incoming::Notification { method, .. } if method == "exit" => {
                return Flow::Exit(if self.shut_down { 0 } else { 1 });
            }
            // Before `initialize` and after `shutdown`, notifications other than `exit` are
            // dropped.
            Incoming::Notification { method, params } => {
                if self.workspace.is_some()
                    && !self.shut_down
                    && let Err((_, problem)) = self.notification(&method, params)
                {
                    self.log(MessageType::WARNING, problem);
                }
            }
            // Answers to the server's own requests: nothing waits for them.
            Incoming::Response => {}
            Incoming::Invalid(response) => self.send_text(response),
        }
        Flow::Continue
    }

    fn request(&mut self, method: &str, request_params: Value) -> Result<Value, (ErrorCode, String)> {
        if self.workspace.is_none() {
            return match method {
                Initialize::METHOD => self.initialize(params(request_params)?),
                _ => Err((
                    ErrorCode::ServerNotInitialized,
                    "the server is not initialized yet".into(),
                )),
            };
        }
        if self.shut_down {
            return Err((ErrorCode::InvalidRequest, "the server is shut down".into()));
        }
        match method {
            Initialize::METHOD => Err((ErrorCode::InvalidRequest, "the server is initialized already".into())),
            Shutdown::METHOD => {
                self.shut_down = true;
                Ok(Value::Null)
            }
            DocumentDiagnosticRequest::METHOD => {
                let params: lsp_types::DocumentDiagnosticParams = params(request_params)?;
                let items = self.pulled_diagnostics(&params.text_document.uri);
                to_value(DocumentDiagnosticReportResult::Report(DocumentDiagnosticReport::Full(
                    RelatedFullDocumentDiagnosticReport {
                        related_documents: None,
                        full_document_diagnostic_report: FullDocumentDiagnosticReport { result_id: None, items },
                    },
                )))
            }
            CodeActionRequest::METHOD => {
                let params: lsp_types::CodeActionParams = params(request_params)?;
                let Some(open) = self.documents.get(&params.text_document.uri) else {
                    return Ok(Value::Null);
                };
                let Some(report) = &open.report else {
                    return Ok(Value::Null);
                };
                let mut problems = Vec::new();
                let root = &self.workspace()?.root;
                let actions = code_actions(&params, report, &open.document, root, &mut problems);
                for problem in problems {
                    self.log(MessageType::WARNING, problem);
                }
                to_value(actions)
            }
            HoverRequest::METHOD => {
                let params: lsp_types::HoverParams = params(request_params)?;
                let position = params.text_document_position_params;
                let found = self.documents.get(&position.text_document.uri).and_then(|open| {
                    let report = open.report.as_ref()?;
                    hover(report, &open.document, position.position)
                });
                to_value(found)
            }
            _ => Err((ErrorCode::MethodNotFound, format!("unknown method `{method}`"))),
        }
    }

    fn initialize(&mut self, params: InitializeParams) -> Result<Value, (ErrorCode, String)> {
        let folder = params.workspace_folders.as_ref().and_then(|folders| folders.first());
        #[allow(deprecated)]
        let root_uri = folder.map(|folder| &folder.uri).or(params.root_uri.as_ref());
        let root = root_uri
            .and_then(uri::to_path)
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_else(|| PathBuf::from("/"));
        let resolver = self
            .options
            .resolver(&root)
            .map_err(|report| (ErrorCode::RequestFailed, report.to_string()))?;
        let cache = self.options.cache(&resolver, &root);
        self.workspace = Some(Workspace { root, resolver, cache });
        self.trace = params.trace.unwrap_or(TraceValue::Off);
        let capabilities = &params.capabilities;
        self.client = Client {
            pulls_diagnostics: capabilities
                .text_document
                .as_ref()
                .is_some_and(|text| text.diagnostic.is_some()),
            refreshes_diagnostics: capabilities
                .workspace
                .as_ref()
                .and_then(|workspace| workspace.diagnostic.as_ref()?.refresh_support)
                .unwrap_or(false),
            watches_files: capabilities
                .workspace
                .as_ref()
                .and_then(|workspace| workspace.did_change_watched_files?.dynamic_registration)
                .unwrap_or(false),
        };
        to_value(InitializeResult {
            capabilities: capabilities_offered(),
            server_info: Some(ServerInfo {
                name: SOURCE.into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
        })
    }

    fn notification(&mut self, method: &str, notification_params: Value) -> Result<(), (ErrorCode, String)> {
        match method {
            Initialized::METHOD => self.watch_files(),
            SetTrace::METHOD => {
                let params: SetTraceParams = params(notification_params)?;
                self.trace = params.value;
            }
            DidOpenTextDocument::METHOD => {
                let params: lsp_types::DidOpenTextDocumentParams = params(notification_params)?;
                let item = params.text_document;
                self.open(item.uri, Document::new(item.text, item.version));
                self.schedule_pass(Duration::ZERO);
            }
            DidChangeTextDocument::METHOD => {
                let params: lsp_types::DidChangeTextDocumentParams = params(notification_params)?;
                let uri = params.text_document.uri;
                let Some(open) = self.documents.get_mut(&uri) else {
                    return Err((
                        ErrorCode::InvalidParams,
                        format!("{}: changed but not open", uri.as_str()),
                    ));
                };
                open.document
                    .apply(params.content_changes, params.text_document.version);
                // Checked once the edits waiting behind this one are applied too.
                open.stale = true;
                self.schedule_pass(PASS_DELAY_AFTER_EDIT);
            }
            DidSaveTextDocument::METHOD => {
                let params: lsp_types::DidSaveTextDocumentParams = params(notification_params)?;
                let path = uri::to_path(&params.text_document.uri);
                if path.is_some_and(|path| self.options.is_config_file(&path)) {
                    self.reload_settings();
                } else {
                    self.schedule_pass(Duration::ZERO);
                }
            }
            DidCloseTextDocument::METHOD => {
                let params: lsp_types::DidCloseTextDocumentParams = params(notification_params)?;
                let uri = params.text_document.uri;
                if self.documents.remove(&uri).is_some() {
                    self.released = true;
                    if !self.client.pulls_diagnostics {
                        self.publish(uri, Vec::new(), None);
                    }
                }
                // Files that saw its unsaved text see the disk again.
                self.schedule_pass(PASS_DELAY_AFTER_EDIT);
            }
            DidChangeWatchedFiles::METHOD => {
                let params: lsp_types::DidChangeWatchedFilesParams = params(notification_params)?;
                let paths: Vec<PathBuf> = params
                    .changes
                    .iter()
                    .filter_map(|change| uri::to_path(&change.uri))
                    .collect();
                if paths.iter().any(|path| self.options.is_config_file(path)) {
                    self.reload_settings();
                } else if !paths.is_empty() {
                    self.schedule_pass(Duration::ZERO);
                }
            }
            // Others (`$/cancelRequest`, `workspace/didChangeConfiguration`, ...) change nothing.
            _ => {}
        }
        Ok(())
    }

    /// Asks the client to tell the server when Python files and configuration files change.
    fn watch_files(&mut self) {
        if !self.client.watches_files {
            return;
        }
        let watchers = ["**/*.py", "**/pyproject.toml", "**/synclint.toml"]
            .into_iter()
            .map(|glob| FileSystemWatcher {
                glob_pattern: GlobPattern::String(glob.into()),
                kind: None,
            })
            .collect();
        let options = DidChangeWatchedFilesRegistrationOptions { watchers };
        let registration = Registration {
            id: "synclint-watched-files".into(),
            method: DidChangeWatchedFiles::METHOD.into(),
            register_options: serde_json::to_value(options).ok(),
        };
        self.send_request(
            RegisterCapability::METHOD,
            RegistrationParams {
                registrations: vec![registration],
            },
        );
    }

    fn open(&mut self, document_uri: Uri, document: Document) {
        let Some(workspace) = &self.workspace else { return };
        let file = uri::to_path(&document_uri);
        let path = file.clone().unwrap_or_else(|| workspace.root.join("untitled.py"));
        // A notebook's JSON is no Python text: its cells are linted by `synclint check`, and an
        // editor's notebook cells come through notebook sync, which this server does not offer.
        if SourceKind::of(&path) == SourceKind::Notebook {
            return;
        }
        let (module, is_package) = self.module_paths.module_of(&path);
        let display = match &file {
            Some(path) => display_path(path, &workspace.root),
            None => document_uri.as_str().to_string(),
        };
        let target = Target {
            path,
            display,
            module,
            is_package,
        };
        let open = OpenDocument {
            document,
            target,
            file,
            report: None,
            context: None,
            shown: None,
            stale: true,
            unshown: false,
        };
        self.documents.insert(document_uri, open);
    }

    /// A document whose report is not of its current text.
    fn next_stale(&self) -> Option<Uri> {
        let stale = self.documents.iter().find(|(_, open)| open.stale);
        stale.map(|(document_uri, _)| document_uri.clone())
    }

    /// Checks every document whose report is not of its current text.
    fn check_stale(&mut self) {
        while let Some(document_uri) = self.next_stale() {
            self.check(&document_uri);
        }
    }

    /// Checks an open document's current text quickly (see [`quick_check`]).
    fn check(&mut self, document_uri: &Uri) {
        let (Some(workspace), Some(open)) = (&self.workspace, self.documents.get_mut(document_uri)) else {
            return;
        };
        let started = Instant::now();
        let checked = quick_check(
            &open.target,
            open.document.text(),
            open.context.as_ref(),
            &workspace.resolver,
        );
        open.stale = false;
        open.unshown = true;
        let traced = format!(
            "quick check of {}, version {}: {:.1} ms",
            open.target.display,
            open.document.version,
            started.elapsed().as_secs_f64() * 1000.0
        );
        match checked {
            Ok(report) => open.report = Some(report),
            Err(problem) => {
                open.report = None;
                self.log(MessageType::ERROR, problem);
            }
        }
        self.log_trace(traced);
    }

    /// Shows the diagnostics of every document checked since they were last shown: to a client
    /// that is sent them, those of a new version always, others where they changed; a client
    /// that pulls them is told to ask again where a check of a version it has changed them.
    fn show_due(&mut self) {
        let Some(workspace) = &self.workspace else { return };
        let mut publish = Vec::new();
        let mut refresh = false;
        for (document_uri, open) in self.documents.iter_mut().filter(|(_, open)| open.unshown) {
            open.unshown = false;
            let current = match &open.report {
                Some(report) => diagnostics(report, &open.document, document_uri, &workspace.root),
                None => Vec::new(),
            };
            let version = open.document.version;
            let new_version = open.shown.as_ref().is_none_or(|shown| shown.version != version);
            let changed = open.shown.as_ref().is_none_or(|shown| shown.diagnostics != current);
            refresh |= changed && !new_version;
            if !self.client.pulls_diagnostics && (changed || new_version) {
                publish.push((document_uri.clone(), current.clone(), version));
            }
            open.shown = Some(Shown {
                version,
                diagnostics: current,
            });
        }
        for (document_uri, diagnostics, version) in publish {
            self.publish(document_uri, diagnostics, Some(version));
        }
        if refresh {
            self.refresh_pulled();
        }
    }

    fn publish(&self, document_uri: Uri, diagnostics: Vec<Diagnostic>, version: Option<i32>) {
        let params = PublishDiagnosticsParams {
            uri: document_uri,
            diagnostics,
            version,
        };
        self.send_notification(PublishDiagnostics::METHOD, params);
    }

    /// The diagnostics of a document the client asks for: an open one's current check, a file
    /// on disk checked alone, or none.
    fn pulled_diagnostics(&mut self, document_uri: &Uri) -> Vec<Diagnostic> {
        if let (Some(workspace), Some(open)) = (&self.workspace, self.documents.get(document_uri)) {
            return match &open.report {
                Some(report) => diagnostics(report, &open.document, document_uri, &workspace.root),
                None => Vec::new(),
            };
        }
        let Some(text) = uri::to_path(document_uri)
            .and_then(|path| std::fs::read(path).ok())
            .and_then(|bytes| decode(bytes).ok())
        else {
            return Vec::new();
        };
        self.open(document_uri.clone(), Document::new(text, 0));
        self.check(document_uri);
        let (Some(workspace), Some(open)) = (&self.workspace, self.documents.remove(document_uri)) else {
            return Vec::new();
        };
        match &open.report {
            Some(report) => diagnostics(report, &open.document, document_uri, &workspace.root),
            None => Vec::new(),
        }
    }

    /// Reads the settings again, and checks every open document with them.
    fn reload_settings(&mut self) {
        let Some(workspace) = &mut self.workspace else { return };
        match self.options.resolver(&workspace.root) {
            Ok(resolver) => {
                workspace.cache = self.options.cache(&resolver, &workspace.root);
                workspace.resolver = resolver;
            }
            Err(report) => {
                let message = format!("synclint: the settings were not reloaded: {report}");
                self.show_message(MessageType::WARNING, message);
                return;
            }
        }
        self.config_errors.clear();
        for open in self.documents.values_mut() {
            open.stale = true;
        }
        self.schedule_pass(Duration::ZERO);
    }

    fn schedule_pass(&mut self, delay: Duration) {
        self.passes.due = Some(Instant::now() + delay);
    }

    /// Starts a project pass over the open files, in the pass thread.
    fn start_pass(&mut self) {
        self.passes.due = None;
        let Some(workspace) = &self.workspace else { return };
        let files: Vec<(PathBuf, String)> = self
            .documents
            .values()
            .filter_map(|open| Some((open.file.clone()?, open.document.text().to_string())))
            .collect();
        if files.is_empty() {
            return;
        }
        let versions = self
            .documents
            .values()
            .filter_map(|open| Some((open.file.clone()?, open.document.version)))
            .collect();
        let request = PassRequest {
            files,
            resolver: workspace.resolver.clone(),
            root: workspace.root.clone(),
            cache: workspace.cache.clone(),
            threads: self.options.threads,
        };
        if self.passes_to_run.send(request).is_ok() {
            self.passes.running = Some((Instant::now(), versions));
        }
    }

    /// Takes what a project pass concluded: the reports of files unchanged since it started,
    /// and for the others, what it knows about them to check their current text with.
    fn pass_done(&mut self, outcome: PassOutcome) {
        let Some((started, versions)) = self.passes.running.take() else {
            return;
        };
        let took = started.elapsed().as_secs_f64() * 1000.0;
        let open = versions.len();
        self.log(
            MessageType::LOG,
            format!("project pass over {open} open files: {took:.1} ms"),
        );
        for problem in outcome.problems {
            self.log(MessageType::WARNING, problem);
        }
        if !outcome.config_errors.is_empty() {
            if outcome.config_errors != self.config_errors {
                let message = format!(
                    "synclint: files are checked alone until the configuration is fixed: {}",
                    outcome.config_errors.join("; ")
                );
                self.show_message(MessageType::WARNING, message);
                self.config_errors = outcome.config_errors;
            }
            return;
        }
        self.config_errors.clear();
        for passed in outcome.files {
            let Some(document_uri) = self.uri_of(&passed.path) else {
                continue;
            };
            let Some(open) = self.documents.get_mut(&document_uri) else {
                continue;
            };
            open.context = Some(passed.context);
            let unchanged = !open.stale && versions.get(&passed.path) == Some(&open.document.version);
            match passed.report {
                Ok(report) if unchanged => {
                    open.report = Some(report);
                    open.unshown = true;
                }
                // Edited meanwhile: checked again with what the pass concluded.
                Ok(_) => open.stale = true,
                Err(problem) => self.log(MessageType::ERROR, problem),
            }
        }
    }

    /// Tells a client that pulls diagnostics to ask again.
    fn refresh_pulled(&mut self) {
        if self.client.pulls_diagnostics && self.client.refreshes_diagnostics {
            self.send_request(WorkspaceDiagnosticRefresh::METHOD, Value::Null);
        }
    }

    fn uri_of(&self, path: &Path) -> Option<Uri> {
        self.documents
            .iter()
            .find(|(_, open)| open.file.as_deref() == Some(path))
            .map(|(document_uri, _)| document_uri.clone())
    }

    fn workspace(&self) -> Result<&Workspace, (ErrorCode, String)> {
        self.workspace.as_ref().ok_or((
            ErrorCode::ServerNotInitialized,
            "the server is not initialized yet".into(),
        ))
    }

    fn log(&self, kind: MessageType, message: String) {
        let params = LogMessageParams { typ: kind, message };
        self.send_notification(LogMessage::METHOD, params);
    }

    /// Traces `message` where the client asked for traces.
    fn log_trace(&self, message: String) {
        if self.trace != TraceValue::Off {
            let params = LogTraceParams { message, verbose: None };
            self.send_notification(LogTrace::METHOD, params);
        }
    }

    fn show_message(&self, kind: MessageType, message: String) {
        let params = ShowMessageParams { typ: kind, message };
        self.send_notification(ShowMessage::METHOD, params);
    }

    fn send_notification(&self, method: &str, params: impl serde::Serialize) {
        let params = serde_json::to_value(params).unwrap_or(Value::Null);
        self.send_text(jsonrpc::notification(method, &params));
    }

    fn send_request(&mut self, method: &str, params: impl serde::Serialize) {
        self.next_request += 1;
        let id = format!("synclint-{}", self.next_request);
        let params = serde_json::to_value(params).unwrap_or(Value::Null);
        self.send_text(jsonrpc::request(&id, method, &params));
    }

    fn send_text(&self, text: String) {
        // The writer is gone only once the output is closed: nothing can be told then.
        let _ = self.outgoing.send(text);
    }
}

fn capabilities_offered() -> ServerCapabilities {
    ServerCapabilities {
        position_encoding: Some(PositionEncodingKind::UTF16),
        text_document_sync: Some(TextDocumentSyncCapability::Options(TextDocumentSyncOptions {
            open_close: Some(true),
            change: Some(TextDocumentSyncKind::INCREMENTAL),
            save: Some(TextDocumentSyncSaveOptions::Supported(true)),
            ..TextDocumentSyncOptions::default()
        })),
        code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
            code_action_kinds: Some(vec![CodeActionKind::QUICKFIX, CodeActionKind::new(FIX_ALL)]),
            ..CodeActionOptions::default()
        })),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        diagnostic_provider: Some(DiagnosticServerCapabilities::Options(DiagnosticOptions {
            identifier: Some(SOURCE.into()),
            inter_file_dependencies: true,
            workspace_diagnostics: false,
            ..DiagnosticOptions::default()
        })),
        ..ServerCapabilities::default()
    }
}

fn params<P: DeserializeOwned>(params: Value) -> Result<P, (ErrorCode, String)> {
    serde_json::from_value(params).map_err(|error| (ErrorCode::InvalidParams, format!("invalid params: {error}")))
}

fn to_value(result: impl serde::Serialize) -> Result<Value, (ErrorCode, String)> {
    serde_json::to_value(result).map_err(|error| (ErrorCode::InternalError, error.to_string()))
}
