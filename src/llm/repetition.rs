//! Noticing an answer that repeats itself, so a looping model costs seconds, not a context.
//!
//! A small model sampled at the server's defaults now and then falls into a loop: one phrase,
//! or whitespace the JSON grammar allows, over and over until `max_tokens` or the context ends
//! it. Seen in CI: SmolLM2-135M wrote 16,863 characters of one draft's body that way, 367 s on
//! a loaded 2-core machine, and the answer was still cut short and thrown away. A stream whose
//! last [`LOOP_SPAN_BYTES`] bytes are one pattern of at most [`LOOP_MAX_PERIOD`] bytes, said at
//! least four times over, is dropped (the server stops generating when its client goes), and
//! the work fails like any unusable answer: it is retried later, when the model samples anew.
//!
//! No answer Lull asks for holds a kilobyte of one exact repeated phrase: a skill's steps, a
//! review's rationale and a replayed answer all vary from line to line.

/// Bytes at the end of an answer that must be one repeated pattern for it to count as a loop.
pub const LOOP_SPAN_BYTES: usize = 1024;
/// The longest pattern looked for: a sentence or two. A loop of a longer passage runs on until
/// `max_tokens` or the reply's size limit ends it.
pub const LOOP_MAX_PERIOD: usize = 256;
// Four copies at least of the longest pattern fit in the span.
const _: () = assert!(LOOP_SPAN_BYTES >= 4 * LOOP_MAX_PERIOD);
/// How much an answer grows between two looks: a look compares up to [`LOOP_MAX_PERIOD`]
/// shifts of the span, so it is not worth doing for every token.
const LOOK_EVERY_BYTES: usize = 128;

/// Watches one streamed answer as it grows.
#[derive(Debug, Default)]
pub(super) struct LoopWatch {
    looked_at: usize,
}

impl LoopWatch {
    /// The loop's period in bytes once `text`, the answer so far, ends in one.
    pub(super) fn observe(&mut self, text: &str) -> Option<usize> {
        if text.len() < self.looked_at + LOOK_EVERY_BYTES {
            return None;
        }
        self.looked_at = text.len();
        loop_period(text.as_bytes())
    }
}

/// The shortest period, up to [`LOOP_MAX_PERIOD`], with which the last [`LOOP_SPAN_BYTES`]
/// bytes of `text` repeat exactly; `None` when they do not (or `text` is shorter).
pub fn loop_period(text: &[u8]) -> Option<usize> {
    let span = text.get(text.len().checked_sub(LOOP_SPAN_BYTES)?..)?;
    (1..=LOOP_MAX_PERIOD).find(|&period| span[period..] == span[..span.len() - period])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered_steps(count: usize) -> String {
        (1..=count)
            .map(|i| format!("{i}. Run the tests, then mark the commit good or bad.\n"))
            .collect()
    }

    #[test]
    fn a_phrase_or_whitespace_said_over_and_over_is_a_loop() {
        let phrase = "the skill is the skill ";
        let looping = format!("{{\"body\": \"Intro. {}", phrase.repeat(60));
        assert_eq!(loop_period(looping.as_bytes()), Some(phrase.len()));
        let spaces = format!("{{\"body\": \"x\"{}", " ".repeat(LOOP_SPAN_BYTES));
        assert_eq!(loop_period(spaces.as_bytes()), Some(1));
        let longest = "a".repeat(LOOP_MAX_PERIOD - 1) + "b";
        assert_eq!(
            loop_period(longest.repeat(5).as_bytes()),
            Some(LOOP_MAX_PERIOD)
        );
    }

    #[test]
    fn varied_text_and_short_or_long_patterns_are_not_loops() {
        assert_eq!(loop_period(numbered_steps(100).as_bytes()), None);
        // Less than the span of a phrase: a list may repeat a word or two.
        let short = numbered_steps(20) + &"check it; ".repeat(LOOP_SPAN_BYTES / 10 - 2);
        assert_eq!(loop_period(short.as_bytes()), None);
        // A passage longer than the longest pattern.
        let passage = numbered_steps(6);
        assert!(passage.len() > LOOP_MAX_PERIOD);
        assert_eq!(loop_period(passage.repeat(10).as_bytes()), None);
        // The loop must reach the end: an answer that looped, then went on, is not looping now.
        let recovered = format!("{}{}", "again ".repeat(300), numbered_steps(30));
        assert_eq!(loop_period(recovered.as_bytes()), None);
    }

    #[test]
    fn the_watch_looks_every_few_hundred_bytes_and_finds_a_loop_soon_after_it_starts() {
        let mut watch = LoopWatch::default();
        let mut text = numbered_steps(20);
        assert_eq!(watch.observe(&text), None);
        let looped_from = text.len();
        let mut found = None;
        while found.is_none() {
            text.push_str("and again ");
            found = watch.observe(&text);
            assert!(text.len() < looped_from + 2 * LOOP_SPAN_BYTES, "found late");
        }
        assert_eq!(found, Some("and again ".len()));
        assert!(text.len() >= looped_from + LOOP_SPAN_BYTES);
    }
}
