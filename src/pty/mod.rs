//! Pseudo-terminals: the `pty` option, the terminal pair a run gets, and the buffer behind
//! `SandboxedProcess.read()`. How the command takes the terminal as its controlling tty lives in
//! the helper (`--controlling-tty`) and in the spawn file actions (`runner::spawn`); reading and
//! writing the master is the runner's (`runner::supervise`).

pub mod options;
pub mod pending_input;
pub mod terminal;
pub mod unread;

pub use options::{parse_pty, PtyOptions, PtySize};
pub use terminal::Terminal;
pub use unread::Unread;
