//! `synclint server`: a language server (LSP 3.17, over stdin and stdout) that shows findings
//! as diagnostics while code is edited, offers their fixes and `# noqa` as code actions, and a
//! rule's documentation on hover. Files are checked with their project, as `synclint check`
//! does, the editor's unsaved text in place of the disk.
//!
//! [`transport`] reads and writes messages ([`framing`] reads their frames, [`jsonrpc`] tells
//! what each one is and writes the answers), [`session`] keeps the open [`documents`] and answers
//! each message, [`analysis`] checks files (a quick check per edit, a project pass when edits
//! pause), and [`diagnostics`], [`actions`] and [`hover`] turn its reports into LSP answers;
//! [`settings`] reads the configuration as the command line does.

mod actions;
mod analysis;
mod diagnostics;
mod documents;
mod framing;
mod hover;
mod jsonrpc;
mod session;
mod settings;
mod transport;
mod uri;

use std::sync::Arc;

use crossbeam_channel::unbounded;

pub use settings::ServerOptions;

use analysis::{PassRequest, project_pass};
use session::Session;
use transport::Transport;

/// Serves one client over stdin and stdout until it says `exit` (0 after `shutdown`, else 1)
/// or the input ends (1). `stack_size`: of the threads that check files (deeply nested code
/// recurses deeply).
pub fn serve(options: ServerOptions, stack_size: usize) -> u8 {
    // One core is left to the session, so that a project pass never slows the answer to an
    // edit.
    let pool = match rayon::ThreadPoolBuilder::new()
        .num_threads(options.threads.saturating_sub(1).max(1))
        .stack_size(stack_size)
        .thread_name(|index| format!("synclint-check-{index}"))
        .build()
    {
        Ok(pool) => Arc::new(pool),
        Err(error) => {
            eprintln!("synclint: cannot start threads: {error}");
            return 2;
        }
    };
    let transport = match Transport::stdio() {
        Ok(transport) => transport,
        Err(error) => {
            eprintln!("synclint: cannot start the server: {error}");
            return 2;
        }
    };
    // Project passes run one at a time, in a thread of their own, so that messages are
    // answered meanwhile. The thread is not waited for at exit: a pass may be under way.
    let (passes_to_run, requests) = unbounded::<PassRequest>();
    let (outcomes, passes_done) = unbounded();
    let started = std::thread::Builder::new()
        .name("synclint-project-pass".into())
        .spawn(move || {
            for request in requests {
                let outcome = pool.install(|| project_pass(&request));
                if outcomes.send(outcome).is_err() {
                    break;
                }
            }
        });
    if let Err(error) = started {
        eprintln!("synclint: cannot start threads: {error}");
        return 2;
    }
    // Quick checks run in the session's thread: its stack is as deep as the pool's.
    let session = std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("synclint-session".into())
            .stack_size(stack_size)
            .spawn_scoped(scope, || {
                Session::new(&options, transport.outgoing.clone(), passes_to_run).run(&transport.incoming, &passes_done)
            })
            .map(|thread| thread.join())
    });
    transport.finish();
    match session {
        Ok(Ok(code)) => code,
        Ok(Err(_)) => 2,
        Err(error) => {
            eprintln!("synclint: cannot start threads: {error}");
            2
        }
    }
}
