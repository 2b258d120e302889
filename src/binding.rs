//! The only module that knows about JavaScript. It converts napi values to the core's types and
//! back, nothing more: validation, planning, spawning and classification all live in the core.
//! Async results come back tagged (`{ ok, value | error }`) because napi-rs rejections cannot carry
//! our error codes; the hand-written `index.js` turns `error` into a `SandboxError`.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use napi::bindgen_prelude::{Buffer, BufferSlice, Object, Status, ToNapiValue};
use napi::{sys, Env};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;
use serde_json::{json, Value};

use crate::error::{ErrorCode, SandboxError};
use crate::options::{parse_spawn_options, Entry, HostContext};
use crate::runner::{self, OutputSink, ProcessHandle, Stream};

/// Worker threads for the addon's tokio runtime: output pumping and timers are light; the
/// blocking work (waiting for children) runs on dedicated per-child threads, not here.
const RUNTIME_WORKERS: usize = 2;

#[napi_derive::module_init]
fn init() {
    if let Ok(rt) = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(RUNTIME_WORKERS)
        .thread_name("sandspawn-rt")
        .thread_keep_alive(std::time::Duration::from_secs(1))
        .enable_all()
        .build()
    {
        napi::bindgen_prelude::create_custom_tokio_runtime(rt);
    }
}

fn js_error(e: SandboxError) -> napi::Error<ErrorCode> {
    napi::Error::new(e.code, e.message)
}

fn tagged<T: serde::Serialize>(r: crate::Result<T>) -> Value {
    match r {
        Ok(v) => json!({ "ok": true, "value": v }),
        Err(e) => json!({ "ok": false, "error": error_record(e) }),
    }
}

/// A `SandboxError` as the record index.js turns into a JavaScript `SandboxError`.
fn error_record(e: SandboxError) -> Value {
    let mut r = json!({ "code": e.code.as_str(), "message": e.message, "stderr": e.stderr });
    if !e.attempts.is_empty() || !e.fixes.is_empty() {
        r["attempts"] = serde_json::to_value(&e.attempts).unwrap_or(Value::Null);
        r["fixes"] = json!(e.fixes);
    }
    r
}

/// What the calling JavaScript context knows: `process.cwd()` and (when `extendEnv`) the base
/// environment: `processEnv: true` on Node's main thread, where `process.env` is the OS
/// environment itself (read here without copying it through JavaScript), or an explicit `env`
/// from a worker thread, whose `process.env` is its own copy.
#[napi(object)]
pub struct HostInfo {
    pub cwd: String,
    pub env: Option<HashMap<String, String>>,
    pub process_env: Option<bool>,
    pub package_dir: Option<String>,
}

impl From<HostInfo> for HostContext {
    fn from(h: HostInfo) -> Self {
        let env: BTreeMap<String, String> = match (h.env, h.process_env) {
            (Some(m), _) => m.into_iter().collect(),
            (None, Some(true)) => std::env::vars_os().filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))).collect(),
            _ => BTreeMap::new(),
        };
        HostContext { cwd: h.cwd.into(), env, package_dir: h.package_dir.map(std::path::PathBuf::from) }
    }
}

/// A run's result as JavaScript receives it (shaped into the public SpawnResult by index.js).
#[napi(object)]
pub struct NativeResult {
    pub command: Vec<String>,
    pub cwd: String,
    pub pid: u32,
    pub exit_code: Option<i32>,
    pub signal: Option<String>,
    pub stdout: String,
    pub stderr: String,
    /// Absent when the interleaving equals one stream (`aggregatedSameAs`), so that large output
    /// crosses into JavaScript once.
    pub aggregated_output: Option<String>,
    pub aggregated_same_as: Option<String>,
    pub truncated: bool,
    pub omitted_stdout: f64,
    pub omitted_stderr: f64,
    pub timed_out: bool,
    pub duration_ms: f64,
    pub sandbox_type: String,
    pub sandbox_denied: bool,
    pub denial: Option<Value>,
    /// The resolved policy as JSON text, which lib/process.js parses only when it is asked for
    /// (`classifySandboxDenial(result)`, escalation): built as a JavaScript object for every
    /// result, a workspace-write policy (some 500 names held absent at `/tmp`'s top, 30 KB) cost
    /// about 0.7 ms of the JavaScript thread a run, most results never read it.
    pub policy: String,
    /// The policy's `toolCaches`, which every `SpawnResult` shows.
    pub tool_caches: Value,
    pub sandbox_details: Value,
    pub host_risks: Value,
    /// Review mode: the run's change set (`null` otherwise).
    pub change_set: Value,
    pub network_denials: Value,
    pub network_denials_omitted: f64,
    pub network_decisions: Value,
    pub network_decisions_omitted: f64,
    /// Of `networkDecisionsOmitted`, repeated allows for a host already listed.
    pub network_repeated_allows_omitted: f64,
    /// `{ cols, rows }` for pty runs.
    pub pty: Option<Value>,
    /// `{ memory: 'rlimit', ... }`: each requested limit and its mechanism.
    pub applied_limits: Value,
    pub limit_exceeded: Option<String>,
    /// `{ userCpuMs, systemCpuMs, maxRssBytes }`.
    pub resource_usage: Value,
}

impl From<crate::runner::RunResult> for NativeResult {
    fn from(r: crate::runner::RunResult) -> Self {
        use crate::runner::result::Aggregated;
        let (aggregated_output, aggregated_same_as) = match r.aggregated_output {
            Aggregated::Text(t) => (Some(t), None),
            Aggregated::SameAsStdout => (None, Some("stdout".to_string())),
            Aggregated::SameAsStderr => (None, Some("stderr".to_string())),
        };
        NativeResult {
            command: r.command,
            cwd: r.cwd,
            pid: r.pid,
            exit_code: r.exit_code,
            signal: r.signal,
            stdout: r.stdout,
            stderr: r.stderr,
            aggregated_output,
            aggregated_same_as,
            truncated: r.truncated,
            omitted_stdout: r.omitted_stdout as f64,
            omitted_stderr: r.omitted_stderr as f64,
            timed_out: r.timed_out,
            duration_ms: r.duration_ms,
            sandbox_type: r.sandbox_type.as_str().to_string(),
            sandbox_denied: r.sandbox_denied,
            denial: r.denial.map(|d| serde_json::to_value(d).unwrap_or(Value::Null)),
            policy: serde_json::to_string(&r.policy).unwrap_or_else(|_| "null".to_string()),
            tool_caches: serde_json::to_value(&r.policy.tool_caches).unwrap_or(Value::Null),
            sandbox_details: serde_json::to_value(&r.sandbox_details).unwrap_or(Value::Null),
            host_risks: serde_json::to_value(&r.host_risks).unwrap_or_else(|_| Value::Array(Vec::new())),
            change_set: serde_json::to_value(&r.change_set).unwrap_or(Value::Null),
            network_denials: serde_json::to_value(&r.network_denials).unwrap_or(Value::Array(Vec::new())),
            network_denials_omitted: r.network_denials_omitted as f64,
            network_decisions: serde_json::to_value(&r.network_decisions).unwrap_or(Value::Array(Vec::new())),
            network_decisions_omitted: r.network_decisions_omitted as f64,
            network_repeated_allows_omitted: r.network_repeated_allows_omitted as f64,
            pty: r.pty.map(|p| json!({ "cols": p.cols, "rows": p.rows })),
            applied_limits: r.applied_limits.iter().map(|(l, m)| (l.as_str().to_string(), serde_json::to_value(m).unwrap_or(Value::Null))).collect::<serde_json::Map<_, _>>().into(),
            limit_exceeded: r.limit_exceeded.map(|l| l.as_str().to_string()),
            resource_usage: serde_json::to_value(r.resource_usage).unwrap_or(Value::Null),
        }
    }
}

/// `{ ok: true, value }` or `{ ok: false, error }` (`error` as `error_record` shapes it).
#[napi(object)]
pub struct WaitOutcome {
    pub ok: bool,
    pub value: Option<NativeResult>,
    pub error: Option<Value>,
}

/// What `read()` resolves with (or its error).
#[napi(object)]
pub struct ReadOutcome {
    pub ok: bool,
    pub data: Option<Buffer>,
    pub exited: bool,
    pub omitted_bytes: f64,
    pub error: Option<Value>,
}

/// One chunk of output, as `onOutput` receives it.
#[napi(object)]
pub struct OutputChunk {
    pub stream: String,
    pub data: Buffer,
}

/// lib/normalize.js makes it return undefined, or (for an internal holder, lib/output-hold.js: the
/// CLI's `--ask` while a question is on the screen) a promise that never rejects.
type OutputCallback = ThreadsafeFunction<OutputChunk, Option<napi::bindgen_prelude::Promise<()>>, OutputChunk, Status, false, true>;

/// Delivers chunks to JavaScript with at most `IN_FLIGHT` chunks queued, so a slow callback slows
/// the reader instead of growing memory. A chunk whose callback returned a promise counts as queued
/// until that settles: the reader stops, and the command blocks on its full pipe.
struct JsSink {
    callback: Arc<OutputCallback>,
    permits: Arc<tokio::sync::Semaphore>,
}

const IN_FLIGHT: usize = 64;

impl OutputSink for JsSink {
    fn chunk(&self, stream: Stream, data: &[u8]) -> Pin<Box<dyn Future<Output = ()> + Send>> {
        let callback = self.callback.clone();
        let permits = self.permits.clone();
        let data = data.to_vec();
        Box::pin(async move {
            let Ok(permit) = permits.acquire_owned().await else { return };
            let chunk = OutputChunk { stream: stream.as_str().to_string(), data: data.into() };
            callback.call_with_return_value(chunk, ThreadsafeFunctionCallMode::NonBlocking, move |ret, _env| {
                match ret {
                    Ok(Some(held)) => {
                        napi::bindgen_prelude::spawn(async move {
                            let _ = held.await;
                            drop(permit);
                        });
                    }
                    _ => drop(permit),
                }
                Ok(())
            });
        })
    }
}

/// What `network.onRequest` is asked (index.js adds the run's command).
#[napi(object)]
pub struct NetworkRequest {
    pub host: String,
    pub port: u32,
    pub protocol: String,
}

/// index.js wraps the user's callback so that it never throws and always resolves with a
/// decision's name, or with `'error'` (a callback that failed: denied).
type RequestCallback = ThreadsafeFunction<NetworkRequest, napi::bindgen_prelude::Promise<String>, NetworkRequest, Status, false, true>;

/// Asks JavaScript; the proxy bounds how long it waits (`requestTimeoutMs`).
struct JsAsker(Arc<RequestCallback>);

impl crate::network::ask::Asker for JsAsker {
    fn ask(&self, q: crate::network::ask::Question) -> Pin<Box<dyn Future<Output = std::result::Result<crate::network::ask::Decision, String>> + Send>> {
        let callback = self.0.clone();
        Box::pin(async move {
            let req = NetworkRequest { host: q.host, port: u32::from(q.port), protocol: q.protocol.as_str().to_string() };
            let answer = callback.call_async(req).await.map_err(|e| e.to_string())?.await.map_err(|e| e.to_string())?;
            crate::network::ask::Decision::parse(&answer).ok_or(answer)
        })
    }
}

/// A process started by sandspawn (internal; wrapped by `SandboxedProcess` in index.js).
#[napi]
pub struct NativeProcess {
    handle: ProcessHandle,
}

/// Validate the options, then start the command in the background. Throws (synchronously) only for
/// invalid options; everything else is reported by `started()` / `wait()`.
#[napi]
pub fn start_process(
    command: Value,
    options: Value,
    host: HostInfo,
    entry: String,
    input: Option<Buffer>,
    on_output: Option<OutputCallback>,
    on_request: Option<RequestCallback>,
) -> napi::Result<NativeProcess, ErrorCode> {
    let entry = if entry == "start" { Entry::Start } else { Entry::Spawn };
    let mut req = parse_spawn_options(&command, &options, &host.into(), entry, input.map(|b| b.to_vec())).map_err(js_error)?;
    req.network_ask = on_request.map(|cb| crate::network::ask::AskHandle(Arc::new(JsAsker(Arc::new(cb)))));
    let sink: Option<Arc<dyn OutputSink>> =
        on_output.map(|cb| Arc::new(JsSink { callback: Arc::new(cb), permits: Arc::new(tokio::sync::Semaphore::new(IN_FLIGHT)) }) as Arc<dyn OutputSink>);
    let (handle, driver) = runner::launch(req, sink);
    napi::bindgen_prelude::spawn(driver);
    Ok(NativeProcess { handle })
}

#[napi]
impl NativeProcess {
    /// `{ ok: true, value: pid }` once the command runs, else `{ ok: false, error }`.
    #[napi]
    pub async fn started(&self) -> Value {
        tagged(self.handle.started().await)
    }

    /// `{ ok: true, value: result }` when the run has ended, else `{ ok: false, error }`. Moves
    /// the result out: index.js calls it once per process and shares the promise.
    #[napi]
    pub async fn wait(&self) -> WaitOutcome {
        match self.handle.take().await {
            Ok(r) => WaitOutcome { ok: true, value: Some(r.into()), error: None },
            Err(e) => WaitOutcome { ok: false, value: None, error: Some(error_record(e)) },
        }
    }

    /// Signal the whole tree (default: the run's killSignal). Unknown names throw.
    #[napi]
    pub fn kill(&self, signal: Option<String>) -> napi::Result<(), ErrorCode> {
        let sig = match signal {
            None => None,
            Some(name) => Some(
                crate::signals::parse_signal(&name)
                    .ok_or_else(|| js_error(SandboxError::invalid("signal", format!("unknown signal {name:?} (use a name such as 'SIGTERM')"))))?,
            ),
        };
        self.handle.kill(sig);
        Ok(())
    }

    #[napi]
    pub async fn write(&self, data: Buffer) -> Value {
        let bytes = data.to_vec();
        tagged(self.handle.write(&bytes).await)
    }

    #[napi]
    pub async fn end(&self) {
        self.handle.end().await
    }

    /// Resize the terminal (`pty` runs). Bad sizes and runs without a terminal throw.
    #[napi]
    pub fn resize(&self, cols: Value, rows: Value) -> napi::Result<(), ErrorCode> {
        let named = |e: SandboxError| js_error(SandboxError::new(e.code, e.message.replacen("options.", "resize(): ", 1)));
        let cols = crate::pty::options::parse_dimension("cols", &cols).map_err(named)?;
        let rows = crate::pty::options::parse_dimension("rows", &rows).map_err(named)?;
        self.handle.resize(crate::pty::PtySize { cols, rows }).map_err(js_error)
    }

    /// Stop (`true`) or restart (`false`) reading the terminal.
    #[napi]
    pub fn set_paused(&self, paused: bool) -> napi::Result<(), ErrorCode> {
        self.handle.set_paused(paused).map_err(js_error)
    }

    /// Terminal output not read yet (index.js validates the numbers).
    #[napi]
    pub async fn read(&self, wait_ms: f64, max_bytes: f64) -> ReadOutcome {
        let wait = std::time::Duration::from_millis(wait_ms.max(0.0).min(u32::MAX as f64) as u64);
        let max = max_bytes.max(1.0).min(usize::MAX as f64) as usize;
        match self.handle.read(wait, max).await {
            Ok(r) => ReadOutcome { ok: true, data: Some(r.data.into()), exited: r.exited, omitted_bytes: r.omitted as f64, error: None },
            Err(e) => ReadOutcome { ok: false, data: None, exited: false, omitted_bytes: 0.0, error: Some(error_record(e)) },
        }
    }
}

/// The launch plan `spawnSandboxed` would run, without running anything.
#[napi]
pub fn build_sandbox_command(command: Value, options: Value, host: HostInfo) -> napi::Result<Value, ErrorCode> {
    crate::api::build_sandbox_command(&command, &options, &host.into()).map_err(js_error)
}

#[napi]
pub fn is_likely_sandbox_denied(sandbox_type: Value, output: Value) -> napi::Result<bool, ErrorCode> {
    crate::api::is_likely_sandbox_denied(&sandbox_type, &output).map_err(js_error)
}

#[napi]
pub fn classify_sandbox_denial(result: Value, policy: Option<Value>) -> napi::Result<Value, ErrorCode> {
    crate::api::classify_sandbox_denial(&result, policy.as_ref()).map_err(js_error)
}

/// `{ ok: true, value: capabilities }`, or `{ ok: false, error }` for invalid options.
#[napi]
pub async fn sandbox_capabilities(cwd: String, options: Option<Value>) -> Value {
    let options = options.unwrap_or(Value::Null);
    let caps = tokio::task::spawn_blocking(move || crate::api::sandbox_capabilities(std::path::Path::new(&cwd), &options)).await;
    match caps {
        Ok(r) => tagged(r),
        Err(e) => tagged::<Value>(Err(SandboxError::new(ErrorCode::SetupFailed, format!("the capability probe failed: {e}")))),
    }
}

/// `{ ok: true, value: report }`, or `{ ok: false, error }` (see `api::tool_cache_store`).
#[napi]
pub async fn tool_cache_store(options: Option<Value>, env: std::collections::HashMap<String, String>) -> Value {
    let options = options.unwrap_or(Value::Null);
    let env = env.into_iter().collect();
    let report = tokio::task::spawn_blocking(move || crate::api::tool_cache_store(&options, &env)).await;
    match report {
        Ok(r) => tagged(r),
        Err(e) => tagged::<Value>(Err(SandboxError::new(ErrorCode::SetupFailed, format!("measuring the tool cache store failed: {e}")))),
    }
}

/// Run a change-set operation on a blocking thread: `{ ok: true, value }` or `{ ok: false, error }`.
async fn change_sets<T: serde::Serialize + Send + 'static>(what: &'static str, op: impl FnOnce() -> crate::Result<T> + Send + 'static) -> Value {
    match tokio::task::spawn_blocking(op).await {
        Ok(r) => tagged(r),
        Err(e) => tagged::<Value>(Err(SandboxError::new(ErrorCode::SetupFailed, format!("{what} failed: {e}")))),
    }
}

/// `discardTerminalInput(fd)`: drop what the terminal on `fd` received but nobody read yet (the
/// CLI, around each of its questions: see `pty::pending_input`); false when `fd` is no terminal.
#[napi]
pub fn discard_terminal_input(fd: i32) -> bool {
    crate::pty::pending_input::discard(fd).is_ok()
}

/// `changedSince(roots, files, sinceMs)`: what changed at or after `sinceMs` in `roots` (a bounded
/// walk) and among `files`: `{ paths, truncated }` (see `planted::changed`). On a blocking thread.
#[napi]
pub async fn changed_since(roots: Vec<String>, files: Vec<String>, since_ms: f64) -> Value {
    let since_ns = (since_ms * 1e6) as i64;
    let walk = move || {
        let paths = |v: Vec<String>| v.into_iter().map(std::path::PathBuf::from).collect::<Vec<_>>();
        crate::planted::changed::changed_since(&paths(roots), &paths(files), since_ns, &crate::planted::changed::BOUNDS)
    };
    match tokio::task::spawn_blocking(walk).await {
        Ok(c) => json!({
            "paths": c.paths.iter().map(|p| p.to_string_lossy()).collect::<Vec<_>>(),
            "truncated": c.truncated,
        }),
        // The walk panicked: nothing can be said about what changed, so say that.
        Err(_) => json!({ "paths": [], "truncated": true }),
    }
}

/// `applyChangeSet(id, options)`.
#[napi]
pub async fn apply_change_set(id: String, options: Option<Value>) -> Value {
    change_sets("applying the change set", move || crate::review::api::apply_change_set(&id, &options.unwrap_or(Value::Null))).await
}

/// `discardChangeSet(id)`.
#[napi]
pub async fn discard_change_set(id: String) -> Value {
    change_sets("discarding the change set", move || crate::review::api::discard_change_set(&id)).await
}

/// `readChange(id, path)`: `{ ok, value: Buffer | null }` (null: deleted in the set).
#[napi(ts_return_type = "Promise<{ ok: boolean; value?: Buffer | null; error?: any }>")]
pub async fn read_change(id: String, path: Value) -> ReadChange {
    let read = tokio::task::spawn_blocking(move || crate::review::api::read_change(&id, &path)).await;
    ReadChange(read.unwrap_or_else(|e| Err(SandboxError::new(ErrorCode::SetupFailed, format!("reading the change failed: {e}")))))
}

/// What `readChange` settles with, made into `{ ok, value | error }` on the JavaScript thread.
pub struct ReadChange(crate::Result<Option<Vec<u8>>>);

impl ToNapiValue for ReadChange {
    unsafe fn to_napi_value(env: sys::napi_env, read: Self) -> napi::Result<sys::napi_value> {
        let js = Env::from_raw(env);
        let mut outcome = Object::new(&js)?;
        match read.0.and_then(|bytes| bytes.map(|b| buffer_of(&js, &b)).transpose()) {
            Ok(value) => {
                outcome.set("ok", true)?;
                outcome.set("value", value)?;
            }
            Err(e) => {
                outcome.set("ok", false)?;
                outcome.set("error", error_record(e))?;
            }
        }
        // SAFETY: `env` is the live environment this conversion was called with.
        unsafe { Object::to_napi_value(env, outcome) }
    }
}

/// `bytes` copied into a new Node Buffer. Node refuses one (past its length limit, or without the
/// memory) by leaving an exception pending, under which the promise could be settled neither way:
/// it stayed pending (a 5 GiB file, found by an attacker's review). The exception is taken here and
/// the refusal becomes the outcome's error. A copy: napi-rs's Buffer made of our `Vec` leaks it
/// when Node refuses.
fn buffer_of<'env>(js: &'env Env, bytes: &[u8]) -> crate::Result<BufferSlice<'env>> {
    BufferSlice::copy_from(js, bytes).map_err(|e| {
        let mut pending = std::ptr::null_mut();
        // SAFETY: the live environment of the conversion; `pending` is only written.
        unsafe { sys::napi_get_and_clear_last_exception(js.raw(), &mut pending) };
        SandboxError::setup_failed(format!("reading the change failed: Node made no Buffer of its {} bytes: {e}", bytes.len()), "")
    })
}

/// A unified diff of one path of a change set (the CLI's `diff`).
#[napi]
pub async fn diff_change(id: String, path: Value) -> Value {
    change_sets("diffing the change", move || crate::review::api::diff_change(&id, &path)).await
}

/// `listChangeSets(options)`.
#[napi]
pub async fn list_change_sets(options: Option<Value>) -> Value {
    change_sets("listing the change sets", move || crate::review::api::list_change_sets(&options.unwrap_or(Value::Null))).await
}

/// One change set described (`sandspawn review show`).
#[napi]
pub async fn show_change_set(id: String, max_changes: u32) -> Value {
    change_sets("reading the change set", move || crate::review::api::show_change_set(&id, max_changes as usize)).await
}

/// The default `protectedNames` (internal: the CLI's `--protected-name` adds to them, and must not
/// keep a copy of its own that drifts from the core's list).
#[napi]
pub fn protected_name_defaults() -> Vec<String> {
    crate::planted::names::defaults()
}

/// Resolves once this process's runs have let go of the tool caches' store (10 s at most): their
/// writes are folded after the result, off its path. Internal: the CLI waits for it before it names
/// a file in the store (`lib/cli/cache-paths.js`).
#[napi]
pub async fn tool_caches_settled() {
    let _ = tokio::task::spawn_blocking(crate::tool_caches::settle).await;
}

/// The sandspawn core version (for diagnostics).
#[napi]
pub fn native_version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}
