//! Sent messages end to end: a send checked and recorded durably (the acceptance), announced, and
//! handed to the engine, one run at a time per chat in acceptance order; the session the engine
//! printed bound to the chat; a failure recorded beside the acceptance, which it never undoes.
//!
//! [`Chats`] is the one home of this work for every front end. Every call into the acceptance record
//! runs on the blocking pool, never on a runtime thread.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::engine::{self, Engine};
use scrollback_accept::send::SendRequest;
use scrollback_accept::store::{Bound, Outcome};
use scrollback_accept::{AcceptStore, Accepted};
use scrollback_core::error::{Error, Result};

/// Events a slow receiver of the chat bus may fall behind before it is told it lagged.
pub const CAPACITY: usize = scrollback_index::events::CAPACITY;

/// What the server announces about sent messages, beside the index's events
/// (`scrollback_index::events::Event`); the HTTP layer merges the two for `/api/events`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChatEvent {
    /// A message was accepted (recorded durably).
    UserMessage(Box<Accepted>),
    /// A chat was bound to the session its engine assigned.
    SessionBound {
        /// The chat.
        chat_id: String,
        /// The session.
        session_id: String,
    },
    /// The engine failed for an accepted message (which stays accepted).
    EngineFailed {
        /// The chat.
        chat_id: String,
        /// The message.
        client_message_id: String,
        /// Why.
        error: String,
    },
    /// A client retired these messages of a chat: the transcript backs them.
    Retired {
        /// The chat.
        chat_id: String,
        /// The messages.
        client_message_ids: Vec<String>,
    },
}

/// The chat bus's sending side; clone it, or call `subscribe` for a receiver.
pub type ChatBus = tokio::sync::broadcast::Sender<ChatEvent>;

/// A new chat bus with no receivers.
pub fn bus() -> ChatBus {
    tokio::sync::broadcast::channel(CAPACITY).0
}

/// Sent messages and their engine runs, for a server. Shared behind an `Arc`.
pub struct Chats {
    store: Arc<AcceptStore>,
    engine: Option<Engine>,
    bus: ChatBus,
    /// One engine run at a time per chat, in acceptance order.
    locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

impl std::fmt::Debug for Chats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Chats").field("engine", &self.engine).finish_non_exhaustive()
    }
}

/// A chat's session and its sends still pending, read together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatState {
    /// The session the chat is bound to, if any.
    pub session_id: Option<String>,
    /// Its pending sends, in acceptance order.
    pub pending: Vec<Accepted>,
}

impl Chats {
    /// Sent messages recorded in `store`, announced on `bus`, each run by `engine` if there is one.
    pub fn new(store: Arc<AcceptStore>, engine: Option<Engine>, bus: ChatBus) -> Arc<Chats> {
        Arc::new(Chats { store, engine, bus, locks: Mutex::new(HashMap::new()) })
    }

    /// Runs `f` on the acceptance record on the blocking pool.
    pub async fn with_store<T: Send + 'static>(
        &self,
        f: impl FnOnce(&AcceptStore) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let store = self.store.clone();
        tokio::task::spawn_blocking(move || f(&store).map_err(|e| e.or_out_of_space(store.data_dir())))
            .await
            .map_err(|e| Error::Internal(e.to_string()))?
    }

    /// A receiver of this server's chat events.
    pub fn subscribe(&self) -> tokio::sync::broadcast::Receiver<ChatEvent> {
        self.bus.subscribe()
    }

    /// The acceptance record itself (for work that runs on the writer's thread, such as forget).
    pub fn store(&self) -> Arc<AcceptStore> {
        self.store.clone()
    }

    fn announce(&self, event: ChatEvent) {
        // No receiver is not an error: nobody is listening.
        let _ = self.bus.send(event);
    }

    /// Whether an engine runs sent messages (without one, [`Chats::send`] takes none).
    pub fn has_engine(&self) -> bool {
        self.engine.is_some()
    }

    /// `POST /api/chat/send`: checks everything, records the message durably, announces it and
    /// starts its engine run; returns once it is recorded (a retry returns the record). Without an
    /// engine nothing would ever write the message into a transcript: it is refused
    /// ([`Error::NoEngine`]) before anything is read or recorded.
    pub async fn send(self: &Arc<Self>, request: SendRequest) -> Result<Outcome> {
        if self.engine.is_none() {
            return Err(Error::NoEngine);
        }
        let checked = tokio::task::spawn_blocking(move || request.validate())
            .await
            .map_err(|e| Error::Internal(e.to_string()))??;
        let queue_run = self.engine.is_some();
        let mut outcome = self.with_store(move |store| store.accept(&checked, queue_run)).await?;
        match &mut outcome {
            Outcome::New(record) => {
                self.announce(ChatEvent::UserMessage(Box::new(record.clone())));
                if queue_run {
                    let (chats, record) = (self.clone(), record.clone());
                    tokio::spawn(async move { chats.run_engine(record.chat_id, record.client_message_id).await });
                }
            }
            // A retry of a message whose engine failed runs it again (the viewer's Retry).
            Outcome::Existing(record) if queue_run && record.engine_error.is_some() => {
                let id = record.client_message_id.clone();
                if self.with_store(move |store| store.queue_retry(&id)).await? {
                    record.engine_error = None;
                    tracing::info!(client_message_id = %record.client_message_id, "a retry of a failed run: the engine runs again");
                    let (chats, record) = (self.clone(), record.clone());
                    tokio::spawn(async move { chats.run_engine(record.chat_id, record.client_message_id).await });
                }
            }
            Outcome::Existing(_) => {}
        }
        Ok(outcome)
    }

    /// Hands the engine every accepted message whose run never ended (the server stopped before or
    /// during it), in acceptance order, each chat's one at a time. Called once as a server starts.
    pub async fn resume(self: &Arc<Self>) -> Result<usize> {
        if self.engine.is_none() {
            return Ok(0);
        }
        let unfinished = self.with_store(|store| store.unfinished_runs()).await?;
        let mut by_chat: Vec<(String, Vec<String>)> = Vec::new();
        for (chat, id) in unfinished.iter().cloned() {
            match by_chat.iter_mut().find(|(c, _)| *c == chat) {
                Some((_, ids)) => ids.push(id),
                None => by_chat.push((chat, vec![id])),
            }
        }
        for (chat, ids) in by_chat {
            tracing::info!(chat_id = %chat, messages = ids.len(), "handing the engine again what it never finished");
            let chats = self.clone();
            tokio::spawn(async move {
                // The chat's turn is held across all of them: a message sent meanwhile runs after.
                let lock = chats.chat_lock(&chat);
                let _turn = lock.lock().await;
                for id in ids {
                    chats.run_in_turn(id).await;
                }
            });
        }
        Ok(unfinished.len())
    }

    /// Binds `chat_id` to `session_id`, announcing it when it is new.
    pub async fn bind(&self, chat_id: String, session_id: String) -> Result<Bound> {
        let (chat, session) = (chat_id.clone(), session_id.clone());
        let bound = self.with_store(move |store| store.bind(&chat, &session)).await?;
        if bound == Bound::Now {
            self.announce(ChatEvent::SessionBound { chat_id, session_id });
        }
        Ok(bound)
    }

    /// Retires these messages of `chat_id` (a client found the transcript backs them); returns and
    /// announces the ones that were pending.
    pub async fn retire(&self, chat_id: String, client_message_ids: Vec<String>) -> Result<Vec<String>> {
        let chat = chat_id.clone();
        let retired = self.with_store(move |store| store.retire(&chat, &client_message_ids)).await?;
        if !retired.is_empty() {
            self.announce(ChatEvent::Retired { chat_id, client_message_ids: retired.clone() });
        }
        Ok(retired)
    }

    /// A chat's bound session and pending sends. Pending is read first: a send the transcript takes
    /// up meanwhile is then in both (and the client's reconcile shows it once), never in neither.
    pub async fn state(&self, chat_id: String) -> Result<ChatState> {
        self.with_store(move |store| {
            let pending = store.pending(&chat_id)?;
            Ok(ChatState { session_id: store.chat_session(&chat_id)?.flatten(), pending })
        })
        .await
    }

    /// The lock that keeps a chat's engine runs one at a time.
    fn chat_lock(&self, chat_id: &str) -> Arc<tokio::sync::Mutex<()>> {
        let mut locks = self.locks.lock().unwrap_or_else(|e| e.into_inner());
        // Chats whose runs are all done are forgotten, so the map stays as small as the work in hand.
        locks.retain(|_, lock| Arc::strong_count(lock) > 1);
        locks.entry(chat_id.to_owned()).or_default().clone()
    }

    /// Runs the engine for an accepted message's run still to be done, after the chat's earlier
    /// runs; records the run's start and end; binds the chat to the session the engine assigned;
    /// records and announces a failure. A message with no run to do is left alone.
    async fn run_engine(&self, chat_id: String, client_message_id: String) {
        let lock = self.chat_lock(&chat_id);
        let _turn = lock.lock().await;
        self.run_in_turn(client_message_id).await;
    }

    /// [`Self::run_engine`] with the chat's turn already held.
    async fn run_in_turn(&self, client_message_id: String) {
        let Some(engine) = self.engine.clone() else { return };
        let id = client_message_id.clone();
        // Read again: an earlier run may have bound the chat since this message was accepted.
        let read = self.with_store(move |store| {
            let Some(record) = store.record(&id)? else { return Ok(None) };
            let Some(run) = store.next_run(&id)? else { return Ok(None) };
            store.start_run(run)?;
            let input = engine::input(&record, |hash| {
                let hash = hash.parse().ok()?;
                store.image(&hash).ok().flatten().map(|i| i.path)
            });
            Ok(Some((record, run, input)))
        });
        let (record, run, input) = match read.await {
            Ok(Some(read)) => read,
            Ok(None) => return,
            Err(e) => {
                tracing::error!(%client_message_id, "engine: cannot read the accepted message back: {e}");
                return;
            }
        };
        tracing::info!(chat_id = %record.chat_id, client_message_id = %record.client_message_id, run, "engine run started");
        let result = engine.run(&input).await;
        let error = result.as_ref().err().map(|e| e.to_string());
        let ended = error.clone();
        if let Err(e) = self.with_store(move |store| store.end_run(run, ended.as_deref())).await {
            tracing::error!("engine: cannot record the end of its run: {e}");
        }
        match (result, error) {
            (Ok(ran), _) => {
                tracing::info!(chat_id = %record.chat_id, client_message_id = %record.client_message_id, run, "engine run ended");
                if let Some(session_id) = ran.session_id.filter(|_| record.session_id.is_none()) {
                    let chat_id = record.chat_id.clone();
                    if let Err(e) = self.bind(chat_id.clone(), session_id.clone()).await {
                        tracing::warn!(%chat_id, %session_id, "engine's session not bound: {e}");
                    }
                }
            }
            (Err(_), error) => {
                let error = error.unwrap_or_default();
                tracing::warn!(chat_id = %record.chat_id, client_message_id = %record.client_message_id, run, "engine failed: {error}");
                self.announce(ChatEvent::EngineFailed {
                    chat_id: record.chat_id,
                    client_message_id: record.client_message_id,
                    error,
                });
            }
        }
    }
}
