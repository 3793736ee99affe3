//! A `need_confirm` put to the person instead of the model: when the call's
//! context has an [`Asker`] (the client supports elicitation), a write that
//! answers `need_confirm` is asked about directly; a yes runs the write again
//! with the confirming parameter in the same call, anything else changes
//! nothing and says so. The wait for the person is bounded by
//! `[limits] confirm_timeout_ms` and does not count in the write's deadline.

use std::time::Duration;

use serde_json::{Value, json};
use toolgate_core::{Answer, Asker, Question, Signal};

use crate::execute::Converted;

/// The confirmation a successful write's signals ask for, if any.
pub(crate) fn wanted(signals: &[Signal]) -> Option<(&str, &str, &Value)> {
    signals.iter().find_map(|signal| match signal {
        Signal::NeedConfirm { message, confirm_param, confirm_value } => {
            Some((message.as_str(), confirm_param.as_str(), confirm_value))
        }
        _ => None,
    })
}

/// Ask, within `timeout`.
pub(crate) async fn ask(asker: &dyn Asker, tool: &str, message: &str, timeout: Duration) -> Answer {
    let question = Question::confirm(format!("{message}. Go ahead? ({tool})"));
    let answer = match tokio::time::timeout(timeout, asker.ask(&question)).await {
        Ok(answer) => answer,
        Err(_) => Answer::Unanswered(format!("no answer within {} s", timeout.as_secs())),
    };
    tracing::info!(tool, outcome = outcome(&answer), "asked the user to confirm");
    answer
}

/// How the person answered, in one word (for the trace, the log and the result).
pub(crate) fn outcome(answer: &Answer) -> &'static str {
    match answer {
        _ if answer.confirms() => "confirmed",
        Answer::Accept(_) | Answer::Decline => "declined",
        Answer::Cancel => "cancelled",
        Answer::Unanswered(_) => "unanswered",
        Answer::Unreachable(_) => "unreachable",
    }
}

/// The result of a write the person did not confirm: nothing ran.
pub(crate) fn not_done(answer: &Answer, message: &str) -> Converted {
    let why = match answer {
        Answer::Unanswered(why) => format!("the user did not answer ({why})"),
        Answer::Cancel => "the user dismissed the question".to_owned(),
        _ => "the user declined".to_owned(),
    };
    let result = json!({
        "done": false,
        "confirmation": outcome(answer),
        "message": format!("Asked to confirm ({message}), {why}: nothing was changed. Do not repeat the call unless the user asks for it again."),
    });
    (result, Vec::new(), Vec::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A person who never answers.
    struct Silent;

    #[async_trait::async_trait]
    impl Asker for Silent {
        async fn ask(&self, _question: &Question) -> Answer {
            std::future::pending().await
        }
    }

    #[tokio::test]
    async fn an_unanswered_question_ends_as_not_done_when_its_time_is_up() {
        let answer =
            ask(&Silent, "cancel_travel_order", "order 7 cannot be undone", Duration::from_millis(20)).await;
        assert!(matches!(answer, Answer::Unanswered(_)), "{answer:?}");
        assert!(!answer.confirms());
        let (result, signals, images) = not_done(&answer, "order 7 cannot be undone");
        assert_eq!(result["done"], false);
        assert_eq!(result["confirmation"], "unanswered");
        assert!(result["message"].as_str().unwrap().contains("did not answer"), "{result}");
        assert!(signals.is_empty() && images.is_empty());
    }

    #[test]
    fn only_an_accepted_yes_confirms() {
        assert!(Answer::Accept(json!({"confirm": true})).confirms());
        assert!(!Answer::Accept(json!({"confirm": false})).confirms());
        assert!(!Answer::Accept(json!({"confirm": "true"})).confirms());
        assert!(!Answer::Decline.confirms() && !Answer::Cancel.confirms());
    }
}
