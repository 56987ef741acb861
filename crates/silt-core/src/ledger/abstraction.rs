//! Folding a cluster of siblings (one action, related situations) under a
//! parent lesson, and naming the parent's situation in words a person
//! would write.

use super::entry::{Entry, Status};
use super::events::{Event, EventKind};
use super::limits::MAX_TEXT_CHARS;
use super::ops::Ledger;

/// Creates the parent of `members` and folds them under it: the parent
/// takes the strongest member's action, `when` (the name
/// [`parent_trigger`] gave the members' situations), the best confidence
/// plus 0.1 and the members' counts summed; the members turn dormant.
pub fn abstract_parent(
    ledger: &mut Ledger,
    members: &[usize],
    when: String,
    id: String,
    now: f64,
) -> Event {
    let strongest = *members
        .iter()
        .max_by(|&&a, &&b| {
            let (ea, eb) = (&ledger.entries[a], &ledger.entries[b]);
            ea.confirm_count
                .cmp(&eb.confirm_count)
                .then(ea.effective(now).total_cmp(&eb.effective(now)))
                .then(b.cmp(&a))
        })
        .expect("a cluster has members");
    let best = members
        .iter()
        .map(|&m| ledger.entries[m].effective(now))
        .fold(0.0, f64::max);
    let mut parent = Entry::new(
        id,
        when,
        ledger.entries[strongest].prefer.clone(),
        (best + 0.1).min(1.0),
        members
            .iter()
            .map(|&m| ledger.entries[m].confirm_count)
            .sum(),
        now,
    );
    parent.hit_count = members.iter().map(|&m| ledger.entries[m].hit_count).sum();
    parent.note = "abstracted parent".into();
    let mut children = Vec::new();
    for &m in members {
        let e = &mut ledger.entries[m];
        e.status = Status::Dormant;
        e.note = format!("folded under {}", parent.id);
        children.push(e.id.clone());
    }
    let event = Event::new(
        now,
        EventKind::Abstracted,
        &parent.id,
        children,
        format!("{} siblings share the action", members.len()),
    );
    ledger.entries.push(parent);
    event
}

/// The parent's situation: the words every trigger begins and ends with,
/// around the parts that differ listed as alternatives ("trading prompt
/// for XAUUSD, crypto perps or futures"); triggers with nothing in common
/// are listed whole ("logging request bodies, writing analytics events or
/// dumping user records"). `None` when the name would pass
/// [`MAX_TEXT_CHARS`]: a parent names every situation it folds, so that a
/// context that recalled a child recalls the parent, and a folded lesson
/// the parent does not name would be hidden from recall.
pub fn parent_trigger(whens: &[&str]) -> Option<String> {
    let words: Vec<Vec<&str>> = whens.iter().map(|w| trigger_words(w)).collect();
    let words: Vec<&[&str]> = words.iter().map(Vec::as_slice).collect();
    parent_trigger_of(whens, &words)
}

/// A trigger's words as [`parent_trigger_of`] takes them.
pub fn trigger_words(when: &str) -> Vec<&str> {
    when.split_whitespace().collect()
}

/// [`parent_trigger`] of triggers already split by [`trigger_words`]: a
/// sleep pass tries a centre's siblings one by one, naming the group
/// anew each time, and splitting and lowercasing every member's words on
/// every try was most of abstraction's time (3.6 s over 100k `agents`
/// lessons).
pub fn parent_trigger_of(whens: &[&str], words: &[&[&str]]) -> Option<String> {
    let same = same_words;
    let shortest = words.iter().map(|w| w.len()).min().unwrap_or(0);
    let first = words.first()?;
    let mut prefix = (0..shortest)
        .take_while(|&k| words.iter().all(|w| same(w[k], first[k])))
        .count();
    let mut suffix = (0..shortest - prefix)
        .take_while(|&k| {
            let last = first[first.len() - 1 - k];
            words.iter().all(|w| same(w[w.len() - 1 - k], last))
        })
        .count();
    // A trigger that is all prefix and suffix would list as nothing
    // ("editing the parser" within "editing the parser in CI"): give
    // the shared ends back until every member has a part of its own.
    while words.iter().any(|w| w.len() == prefix + suffix) && prefix + suffix > 0 {
        if suffix > 0 {
            suffix -= 1;
        } else {
            prefix -= 1;
        }
    }
    let mut parts: Vec<String> = Vec::new();
    for w in words {
        let part = w[prefix..w.len() - suffix].join(" ");
        if !parts.iter().any(|p| same(p, &part)) {
            parts.push(part);
        }
    }
    let name = if parts.len() == 1 {
        whens[0].to_string()
    } else {
        let mut alternatives = parts.join(", ");
        if let Some(cut) = alternatives.rfind(", ") {
            alternatives.replace_range(cut..cut + 2, " or ");
        }
        let (head, tail) = (
            first[..prefix].join(" "),
            first[first.len() - suffix..].join(" "),
        );
        [head.as_str(), alternatives.as_str(), tail.as_str()]
            .iter()
            .filter(|s| !s.is_empty())
            .copied()
            .collect::<Vec<_>>()
            .join(" ")
    };
    (name.chars().count() <= MAX_TEXT_CHARS).then_some(name)
}

/// Whether two words (or phrases) are the same but for case. ASCII is
/// compared in place; anything else lowercased whole, as
/// `str::to_lowercase` does it (a final sigma included).
fn same_words(a: &str, b: &str) -> bool {
    if a.is_ascii() && b.is_ascii() {
        a.eq_ignore_ascii_case(b)
    } else {
        a.to_lowercase() == b.to_lowercase()
    }
}

#[cfg(test)]
mod tests {
    use super::{parent_trigger, same_words};

    /// Compared in place or lowercased whole, words are the same exactly
    /// when their lowercased forms are, in and out of ASCII.
    #[test]
    fn words_are_the_same_when_their_lowercase_is() {
        let words = [
            "CI",
            "ci",
            "Ci",
            "cI",
            "c",
            "",
            "C-I",
            "c-i",
            "naïve",
            "NAÏVE",
            "ΟΔΟΣ",
            "οδος",
            "οδοσ",
            "İstanbul",
            "istanbul",
            "i̇stanbul",
            "Straße",
            "STRASSE",
            "ǅ",
            "ǆ",
        ];
        for a in words {
            for b in words {
                assert_eq!(
                    same_words(a, b),
                    a.to_lowercase() == b.to_lowercase(),
                    "{a:?} / {b:?}"
                );
            }
        }
    }

    fn named(whens: &[&str]) -> String {
        parent_trigger(whens).expect("short enough to name")
    }

    #[test]
    fn the_parts_that_differ_are_listed_between_the_shared_words() {
        assert_eq!(
            named(&[
                "trading prompt for XAUUSD",
                "trading prompt for crypto perps",
                "trading prompt for futures",
            ]),
            "trading prompt for XAUUSD, crypto perps or futures"
        );
        assert_eq!(
            named(&[
                "editing the parser in repo r3",
                "editing the lexer in repo r3",
                "Editing the type checker in repo r3",
            ]),
            "editing the parser, lexer or type checker in repo r3"
        );
    }

    #[test]
    fn triggers_with_nothing_in_common_are_listed_whole() {
        assert_eq!(
            named(&[
                "logging HTTP request bodies",
                "writing analytics events",
                "dumping user records for debugging",
            ]),
            "logging HTTP request bodies, writing analytics events or dumping user records \
             for debugging"
        );
    }

    #[test]
    fn a_member_inside_another_keeps_a_part_of_its_own() {
        assert_eq!(
            named(&[
                "editing the parser",
                "editing the parser in CI",
                "editing the lexer"
            ]),
            "editing the parser, parser in CI or lexer"
        );
        // the same words said twice are one alternative
        assert_eq!(
            named(&[
                "calling the API",
                "Calling the api",
                "calling the billing API"
            ]),
            "calling the API or billing API"
        );
    }

    #[test]
    fn a_list_past_the_text_limit_is_not_named() {
        let long: Vec<String> = (0..40)
            .map(|i| format!("deploying the service-{i}-with-a-long-name of the fleet"))
            .collect();
        let whens: Vec<&str> = long.iter().map(String::as_str).collect();
        assert_eq!(parent_trigger(&whens), None);
        let fits = parent_trigger(&whens[..5]).unwrap();
        assert!(fits.chars().count() <= super::MAX_TEXT_CHARS, "{fits}");
        assert_eq!(
            fits,
            "deploying the service-0-with-a-long-name, service-1-with-a-long-name, \
             service-2-with-a-long-name, service-3-with-a-long-name or \
             service-4-with-a-long-name of the fleet"
        );
        assert_eq!(parent_trigger(&[&"b".repeat(295), &"c".repeat(295)]), None);
        assert_eq!(parent_trigger(&[]), None);
    }
}
