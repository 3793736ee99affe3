//! The person running the agent, asked during its tool calls: the gateway's
//! confirmation of a write that answers `need_confirm`, and (with `[limits]
//! ask_for_missing`) the values a call left out. A run asks through an
//! [`Asking`]: an [`Asker`] of its own (the terminal), or its event
//! consumer (a chat UI), which reads the `elicitation` event and answers
//! through [`Agent::answer`]. Either way each question is announced as an
//! `elicitation` event and its end as an `elicitation_answered` event, and
//! the time the person takes does not count in the run's deadline. The wait
//! itself is bounded by the gateway (`[limits] confirm_timeout_ms`): a
//! question nobody answers in time ends as unanswered, and the write does
//! not happen.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::mpsc::Sender;
use tokio::sync::{Notify, oneshot};
use tokio::time::Instant;
use toolgate_core::{Answer, Asker, Question};

use crate::{Agent, Event};

/// Who a run's questions go to.
#[derive(Clone, Default)]
pub enum Asking {
    /// Nobody: a write that needs confirmation answers `need_confirm` to the
    /// model, as without elicitation. The default.
    #[default]
    Nobody,
    /// This asker (e.g. the terminal the agent runs in). Its questions are
    /// announced as events too, so a UI can show them.
    Asker(Arc<dyn Asker>),
    /// The run's event consumer: a question is an `elicitation` event, and
    /// its answer is what [`Agent::answer`] is given for the question's id
    /// by `owner` (whoever started the run, e.g. its API key's id). Anyone
    /// else answering gets [`UnknownQuestion`].
    Events {
        /// Who may answer this run's questions.
        owner: String,
    },
}

impl std::fmt::Debug for Asking {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Asking::Nobody => f.write_str("Nobody"),
            Asking::Asker(_) => f.write_str("Asker(..)"),
            Asking::Events { owner } => f.debug_struct("Events").field("owner", owner).finish(),
        }
    }
}

/// An answer for a question that is not waiting for this caller: it was
/// never asked, was already answered, timed out, its run ended, or another
/// caller's run asked it (which is not told apart, so ids of others' runs
/// cannot be probed).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "no question `{0}` is waiting for your answer: it was answered already, its time ran out, its run ended, \
     or it is not yours. Answer the id of the latest `elicitation` event of your own run"
)]
pub struct UnknownQuestion(pub String);

/// Questions of [`Asking::Events`] runs waiting for their answer, by id.
#[derive(Default)]
pub(crate) struct Questions {
    waiting: Mutex<HashMap<String, Waiting>>,
}

struct Waiting {
    owner: String,
    answer: oneshot::Sender<Answer>,
}

impl std::fmt::Debug for Questions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let waiting = self.waiting.lock().map(|w| w.len()).unwrap_or_default();
        f.debug_struct("Questions").field("waiting", &waiting).finish()
    }
}

impl Questions {
    fn open(&self, id: &str, owner: &str) -> oneshot::Receiver<Answer> {
        let (tx, rx) = oneshot::channel();
        let waiting = Waiting { owner: owner.to_owned(), answer: tx };
        self.waiting.lock().unwrap_or_else(|e| e.into_inner()).insert(id.to_owned(), waiting);
        rx
    }

    fn close(&self, id: &str) {
        self.waiting.lock().unwrap_or_else(|e| e.into_inner()).remove(id);
    }

    fn answer(&self, id: &str, owner: &str, answer: Answer) -> Result<(), UnknownQuestion> {
        let mut waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
        match waiting.get(id) {
            Some(w) if w.owner == owner => {}
            _ => return Err(UnknownQuestion(id.to_owned())),
        }
        let w = waiting.remove(id).ok_or_else(|| UnknownQuestion(id.to_owned()))?;
        // A receiver that is gone (the question was just given up) is an unknown question too.
        w.answer.send(answer).map_err(|_| UnknownQuestion(id.to_owned()))
    }
}

impl Agent {
    /// Answer a question of a run started with [`Asking::Events`]: `id` is
    /// the `elicitation` event's, `owner` must be that run's owner.
    pub fn answer(&self, question_id: &str, owner: &str, answer: Answer) -> Result<(), UnknownQuestion> {
        self.questions.answer(question_id, owner, answer)
    }
}

/// The time a run spent waiting for its person, which its deadline does not count.
#[derive(Debug, Default)]
pub(crate) struct AskClock {
    state: Mutex<ClockState>,
    changed: Notify,
}

#[derive(Debug, Default)]
struct ClockState {
    /// Time spent with at least one question open, up to `since`.
    waited: Duration,
    /// Questions open now.
    open: usize,
    /// Since when some question is open.
    since: Option<Instant>,
}

impl AskClock {
    fn opened(&self) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.open == 0 {
            state.since = Some(Instant::now());
        }
        state.open += 1;
        drop(state);
        self.changed.notify_waiters();
    }

    fn closed(&self) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.open = state.open.saturating_sub(1);
        if state.open == 0
            && let Some(since) = state.since.take()
        {
            state.waited += since.elapsed();
        }
        drop(state);
        self.changed.notify_waiters();
    }

    /// `deadline` moved by the time spent asking so far; `None` while a question is open.
    pub(crate) fn shifted(&self, deadline: Instant) -> Option<Instant> {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        (state.open == 0).then(|| deadline + state.waited)
    }

    /// Resolves once `deadline`, moved by the time spent asking, has passed
    /// with no question open.
    pub(crate) async fn expired(&self, deadline: Instant) {
        loop {
            let changed = self.changed.notified();
            let mut changed = std::pin::pin!(changed);
            changed.as_mut().enable();
            match self.shifted(deadline) {
                // A question is open: the clock stands still until it closes.
                None => changed.await,
                Some(at) => {
                    tokio::select! {
                        () = tokio::time::sleep_until(at) => {
                            if self.shifted(deadline).is_some_and(|at| at <= Instant::now()) {
                                return;
                            }
                        }
                        () = changed => {}
                    }
                }
            }
        }
    }
}

/// What one run shares among its calls' askers.
pub(crate) struct RunAsking {
    how: How,
    events: Sender<Event>,
    clock: Arc<AskClock>,
}

enum How {
    Asker(Arc<dyn Asker>),
    Events { owner: String, questions: Arc<Questions> },
}

impl RunAsking {
    /// The run's asking, `None` for [`Asking::Nobody`].
    pub(crate) fn new(
        asking: Asking,
        agent: &Agent,
        events: &Sender<Event>,
        clock: Arc<AskClock>,
    ) -> Option<Arc<Self>> {
        let how = match asking {
            Asking::Nobody => return None,
            Asking::Asker(asker) => How::Asker(asker),
            Asking::Events { owner } => How::Events { owner, questions: agent.questions.clone() },
        };
        Some(Arc::new(Self { how, events: events.clone(), clock }))
    }

    /// The asker of one tool call.
    pub(crate) fn for_call(self: &Arc<Self>, call_id: &str) -> Arc<dyn Asker> {
        Arc::new(CallAsker { run: self.clone(), call_id: call_id.to_owned() })
    }
}

/// Asks for one tool call of a run, announcing each question.
struct CallAsker {
    run: Arc<RunAsking>,
    call_id: String,
}

/// The outcome of an answer, in one word (the `elicitation_answered` event's).
pub(crate) fn outcome(answer: &Answer) -> &'static str {
    match answer {
        Answer::Accept(_) => "accepted",
        Answer::Decline => "declined",
        Answer::Cancel => "cancelled",
        Answer::Unanswered(_) => "unanswered",
        Answer::Unreachable(_) => "unreachable",
    }
}

/// An open question: closed when dropped, also when the wait is given up
/// (the gateway's timeout, a cancelled run), which ends it as unanswered.
struct Open<'a> {
    run: &'a RunAsking,
    id: String,
    ended: bool,
}

impl Drop for Open<'_> {
    fn drop(&mut self) {
        if let How::Events { questions, .. } = &self.run.how {
            questions.close(&self.id);
        }
        self.run.clock.closed();
        if !self.ended {
            tracing::info!(question = %self.id, "a question of the agent was not answered in time");
            let event = Event::ElicitationAnswered { id: self.id.clone(), outcome: "unanswered".to_owned() };
            // Not awaited (a drop cannot wait): a full channel loses this one, a closed one ends the run anyway.
            let _ = self.run.events.try_send(event);
        }
    }
}

#[toolgate_core::async_trait]
impl Asker for CallAsker {
    async fn ask(&self, question: &Question) -> Answer {
        let run = &*self.run;
        let id = format!("q_{}", uuid::Uuid::new_v4().simple());
        let waiting = match &run.how {
            How::Events { owner, questions } => Some(questions.open(&id, owner)),
            How::Asker(_) => None,
        };
        run.clock.opened();
        let mut open = Open { run, id: id.clone(), ended: false };
        let asked = Event::Elicitation {
            id: id.clone(),
            call_id: self.call_id.clone(),
            message: question.message.clone(),
            requested_schema: question.schema.clone(),
        };
        if run.events.send(asked).await.is_err() {
            // Nobody reads the run any more (it is stopping): nobody can be asked.
            return Answer::Unreachable("the run's consumer went away".to_owned());
        }
        let answer = match (&run.how, waiting) {
            (How::Asker(asker), _) => asker.ask(question).await,
            (How::Events { .. }, Some(waiting)) => {
                waiting.await.unwrap_or_else(|_| Answer::Unanswered("the question was given up".to_owned()))
            }
            (How::Events { .. }, None) => Answer::Unreachable("no question was opened".to_owned()),
        };
        open.ended = true;
        let outcome = outcome(&answer);
        tracing::info!(question = %id, outcome, "the agent's question was answered");
        let _ = run.events.send(Event::ElicitationAnswered { id, outcome: outcome.to_owned() }).await;
        drop(open);
        answer
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_owner_answers_and_only_once() {
        let questions = Questions::default();
        let mut rx = questions.open("q1", "key_a");
        assert_eq!(
            questions.answer("q1", "key_b", Answer::Decline),
            Err(UnknownQuestion("q1".into())),
            "another caller's answer is refused"
        );
        assert_eq!(questions.answer("q2", "key_a", Answer::Decline), Err(UnknownQuestion("q2".into())));
        assert_eq!(questions.answer("q1", "key_a", Answer::Cancel), Ok(()));
        assert_eq!(rx.try_recv().unwrap(), Answer::Cancel);
        assert_eq!(questions.answer("q1", "key_a", Answer::Decline), Err(UnknownQuestion("q1".into())));
    }

    #[tokio::test]
    async fn the_deadline_stands_still_while_a_question_is_open() {
        let clock = Arc::new(AskClock::default());
        let start = Instant::now();
        let deadline = start + Duration::from_millis(100);
        clock.opened();
        let expired = {
            let clock = clock.clone();
            tokio::spawn(async move {
                clock.expired(deadline).await;
                Instant::now()
            })
        };
        // The person takes 300 ms (the deadline was 100 ms away).
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(!expired.is_finished(), "the deadline passed while the person was asked");
        clock.closed();
        let at = expired.await.unwrap() - start;
        assert!(at >= Duration::from_millis(400), "100 ms of run and 300 ms of asking: {at:?}");
        assert!(at < Duration::from_secs(2), "{at:?}");
    }

    #[tokio::test]
    async fn a_question_given_up_leaves_nothing_waiting_and_says_unanswered() {
        let questions = Arc::new(Questions::default());
        let (tx, mut rx) = tokio::sync::mpsc::channel(8);
        let how = How::Events { owner: "key_a".into(), questions: questions.clone() };
        let run = Arc::new(RunAsking { how, events: tx, clock: Arc::default() });
        let asker = run.for_call("call_1");
        let question = Question::confirm("order 7 cannot be undone");
        // The gateway's timeout gives the wait up (drops it).
        let given_up = tokio::time::timeout(Duration::from_millis(50), asker.ask(&question)).await;
        assert!(given_up.is_err());
        assert_eq!(questions.waiting.lock().unwrap().len(), 0, "nothing left waiting");
        assert!(run.clock.shifted(Instant::now()).is_some(), "the clock runs again");
        let Some(Event::Elicitation { id, call_id, .. }) = rx.recv().await else { panic!("asked") };
        assert_eq!(call_id, "call_1");
        assert_eq!(rx.recv().await, Some(Event::ElicitationAnswered { id, outcome: "unanswered".into() }));
    }
}
