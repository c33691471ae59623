//! One tray per data folder: `<data_dir>/desktop.lock` and `<data_dir>/desktop.sock`.
//!
//! The first launch takes an OS file lock on `desktop.lock` (the OS lets go when the process
//! ends, so a crash never blocks a start) and listens on the Unix socket `desktop.sock` (mode
//! 0600, in the private data folder). A later launch on the same folder cannot take the lock: it
//! connects, sends one line ([`Request`]: `open` or `open <view>`), and exits 0; the first opens
//! the window. The lock is apart from the engine's `lull.lock`, so the tray still runs (and says
//! why its engine does not) when `lull serve` serves the folder.
//!
//! Invariant: a connection is read for one bounded line within [`READ_DEADLINE`]; anything else
//! is dropped with a log line, never a crash.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::Write as _;
use std::os::unix::fs::PermissionsExt as _;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, BufReader};
use tokio::net::UnixListener;
use tokio::sync::mpsc;

use crate::window::View;

/// The lock file's name inside the data folder.
pub const LOCK_FILE: &str = "desktop.lock";
/// The socket's name inside the data folder.
pub const SOCKET_FILE: &str = "desktop.sock";
/// How long a second launch keeps trying to reach a first one that is still starting.
const HAND_OVER_DEADLINE: Duration = Duration::from_secs(5);
/// The pause between two tries.
const HAND_OVER_RETRY: Duration = Duration::from_millis(100);
/// How long the first instance waits for a connection's line.
const READ_DEADLINE: Duration = Duration::from_secs(2);
/// The longest line the first instance reads (`open settings` is 13 bytes).
const REQUEST_MAX_BYTES: u64 = 256;

/// What a later launch asks of the first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Request {
    /// Open the window, on this view if one is named.
    Open(Option<View>),
}

impl Request {
    /// The request's line, without its newline.
    pub fn line(self) -> String {
        match self {
            Request::Open(None) => "open".into(),
            Request::Open(Some(view)) => format!("open {}", view.id()),
        }
    }

    /// Reads a line; an unknown view opens the window where it is.
    pub fn parse(line: &str) -> Option<Request> {
        let mut words = line.split_whitespace();
        match (words.next()?, words.next(), words.next()) {
            ("open", None, None) => Some(Request::Open(None)),
            ("open", Some(id), None) => Some(Request::Open(View::from_id(id).or_else(|| {
                tracing::warn!(view = id, "a later launch asked for an unknown view");
                None
            }))),
            _ => None,
        }
    }
}

/// Who has the data folder's tray.
pub enum Claim {
    /// This process: it serves the socket.
    First(Instance),
    /// Another live tray, reachable at this socket.
    Running(PathBuf),
}

/// The lock and the listening socket of the first instance; dropping it removes the socket.
pub struct Instance {
    _lock: File,
    socket: PathBuf,
    listener: Option<std::os::unix::net::UnixListener>,
}

/// Takes the data folder's tray (creating the folder, private), or finds the one that has it.
pub fn claim(data_dir: &Path) -> anyhow::Result<Claim> {
    lull::data_dir::create_private_dir(data_dir)?;
    let lock_path = data_dir.join(LOCK_FILE);
    let lock = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&lock_path)
        .with_context(|| format!("cannot open {}", lock_path.display()))?;
    let socket = data_dir.join(SOCKET_FILE);
    match lock.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => return Ok(Claim::Running(socket)),
        Err(TryLockError::Error(error)) => {
            return Err(error).with_context(|| format!("cannot lock {}", lock_path.display()))
        }
    }
    // The lock is ours, so a socket file left here is a dead tray's.
    match std::fs::remove_file(&socket) {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(error) => {
            return Err(error).with_context(|| format!("cannot remove {}", socket.display()))
        }
    }
    let listener = std::os::unix::net::UnixListener::bind(&socket)
        .with_context(|| format!("cannot listen on {}", socket.display()))?;
    std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o600))
        .with_context(|| format!("cannot make {} private", socket.display()))?;
    listener.set_nonblocking(true)?;
    Ok(Claim::First(Instance {
        _lock: lock,
        socket,
        listener: Some(listener),
    }))
}

impl Instance {
    /// Serves later launches until the task is dropped: each request goes to `requests`.
    /// Must run on the tokio runtime; call once.
    pub async fn serve(&mut self, requests: mpsc::UnboundedSender<Request>) {
        let listener = match self.listener.take().map(UnixListener::from_std) {
            Some(Ok(listener)) => listener,
            Some(Err(error)) => {
                return tracing::error!(%error, "cannot listen for later launches");
            }
            None => return,
        };
        loop {
            let stream = match listener.accept().await {
                Ok((stream, _)) => stream,
                Err(error) => {
                    tracing::warn!(%error, "cannot accept a later launch");
                    continue;
                }
            };
            match tokio::time::timeout(READ_DEADLINE, read_request(stream)).await {
                Ok(Some(request)) => {
                    if requests.send(request).is_err() {
                        return; // quitting
                    }
                }
                Ok(None) => tracing::warn!("a later launch sent no request Lull knows"),
                Err(_) => tracing::warn!("a later launch sent nothing within {READ_DEADLINE:?}"),
            }
        }
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.socket);
    }
}

async fn read_request(stream: tokio::net::UnixStream) -> Option<Request> {
    let mut line = String::new();
    BufReader::new(stream.take(REQUEST_MAX_BYTES))
        .read_line(&mut line)
        .await
        .ok()?;
    Request::parse(line.strip_suffix('\n')?)
}

/// Sends `request` to the tray listening at `socket`, trying for a while when it is still
/// starting (it takes the lock just before it listens).
pub fn hand_over(socket: &Path, request: Request) -> anyhow::Result<()> {
    hand_over_within(socket, request, HAND_OVER_DEADLINE)
}

fn hand_over_within(socket: &Path, request: Request, deadline: Duration) -> anyhow::Result<()> {
    let started = Instant::now();
    let mut stream = loop {
        match UnixStream::connect(socket) {
            Ok(stream) => break stream,
            Err(error) if started.elapsed() >= deadline => {
                return Err(error).with_context(|| {
                    format!(
                        "Lull already runs for this data folder, but does not answer on {}",
                        socket.display()
                    )
                })
            }
            Err(_) => std::thread::sleep(HAND_OVER_RETRY),
        }
    };
    writeln!(stream, "{}", request.line())
        .with_context(|| format!("cannot write to {}", socket.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first(dir: &Path) -> Instance {
        match claim(dir).unwrap() {
            Claim::First(instance) => instance,
            Claim::Running(_) => panic!("expected to be first"),
        }
    }

    #[test]
    fn requests_read_back_as_they_were_written() {
        for request in [Request::Open(None), Request::Open(Some(View::Drafts))] {
            assert_eq!(Request::parse(&request.line()), Some(request));
        }
        assert_eq!(
            Request::parse("open reviews"),
            Some(Request::Open(Some(View::Reviews)))
        );
        assert_eq!(Request::parse("open nowhere"), Some(Request::Open(None)));
        for refused in ["", "quit", "open drafts now", "opendrafts"] {
            assert_eq!(Request::parse(refused), None, "{refused:?}");
        }
    }

    #[test]
    fn the_first_launch_holds_the_folder_and_a_private_socket_until_it_ends() {
        let dir = tempfile::tempdir().unwrap();
        let instance = first(dir.path());
        let socket = dir.path().join(SOCKET_FILE);
        let mode = std::fs::metadata(&socket).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert!(matches!(claim(dir.path()).unwrap(), Claim::Running(at) if at == socket));

        drop(instance);
        assert!(!socket.exists(), "the socket goes with the instance");
        let _again = first(dir.path());
    }

    #[test]
    fn a_socket_left_by_a_dead_tray_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(SOCKET_FILE), "stale").unwrap();
        let _instance = first(dir.path());
        let kind = std::fs::symlink_metadata(dir.path().join(SOCKET_FILE)).unwrap();
        assert!(std::os::unix::fs::FileTypeExt::is_socket(&kind.file_type()));
    }

    #[tokio::test]
    async fn a_later_launch_hands_its_request_to_the_first() {
        let dir = tempfile::tempdir().unwrap();
        let mut instance = first(dir.path());
        let (requests, mut received) = mpsc::unbounded_channel();
        let serving = tokio::spawn(async move { instance.serve(requests).await });
        let socket = dir.path().join(SOCKET_FILE);

        let sending = socket.clone();
        tokio::task::spawn_blocking(move || {
            hand_over(&sending, Request::Open(Some(View::Reviews))).unwrap();
            // Junk and a line too long are dropped; the next request still arrives.
            let mut junk = UnixStream::connect(&sending).unwrap();
            junk.write_all(&[b'x'; 1024]).unwrap();
            drop(junk);
            hand_over(&sending, Request::Open(None)).unwrap();
        })
        .await
        .unwrap();
        assert_eq!(
            received.recv().await,
            Some(Request::Open(Some(View::Reviews)))
        );
        assert_eq!(received.recv().await, Some(Request::Open(None)));
        serving.abort();
    }

    #[test]
    fn a_launch_that_finds_no_answer_gives_up_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let deadline = Duration::from_millis(300);
        let started = Instant::now();
        let error = hand_over_within(&dir.path().join(SOCKET_FILE), Request::Open(None), deadline)
            .unwrap_err();
        assert!(
            started.elapsed() >= deadline,
            "it tried for the whole deadline"
        );
        assert!(
            format!("{error:#}").contains("does not answer"),
            "{error:#}"
        );
    }
}
