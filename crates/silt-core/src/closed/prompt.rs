//! The prompts: a system message that fixes the answer format, and a user
//! message with the question, its options under letters, and the item.

use crate::ledger::relate::Lesson;
use crate::types::{AnswerSpace, Question};

/// The most options a prompt labels (one letter each).
pub const MAX_OPTIONS: usize = 26;

/// A chat prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prompt {
    /// The system message: fixes the answer format (one letter).
    pub system: String,
    /// The user message: question, lettered options, then the item.
    pub user: String,
    /// How many bytes at the head of `user` every item of the batch
    /// shares (the text before the item): a local model runs the system
    /// message and this head once and continues each item from there.
    pub shared: usize,
}

impl Prompt {
    /// The prompt as one text, for servers that take a plain completion
    /// prompt (`/v1/completions`, llama.cpp's `/completion`): the answer
    /// token follows "Answer:".
    pub fn plain(&self) -> String {
        format!("{}\n\n{}\n\nAnswer:", self.system, self.user)
    }
}

/// The label of the option at `position`: A, B, C, ...
pub fn letter(position: usize) -> String {
    assert!(position < MAX_OPTIONS, "at most {MAX_OPTIONS} options");
    char::from(b'A' + position as u8).to_string()
}

/// The labels of `n` options.
pub fn letters(n: usize) -> Vec<String> {
    (0..n).map(letter).collect()
}

const SYSTEM: &str = "You answer closed questions. Read the question, the options and the \
item, then reply with the single capital letter of the option that applies. Reply with \
that letter only.";

/// The options of an answer space, in the order the answers list them:
/// yes then no, the options as given, the levels lowest first.
pub fn options(space: &AnswerSpace) -> Vec<String> {
    match space {
        AnswerSpace::Judge { yes, no } => {
            vec![format!("Yes: {}", yes.trim()), format!("No: {}", no.trim())]
        }
        AnswerSpace::Choose(opts) => opts
            .iter()
            .map(|o| format!("{}: {}", o.label.trim(), o.criterion.trim()))
            .collect(),
        AnswerSpace::Score(levels) => {
            let n = levels.len();
            levels
                .iter()
                .enumerate()
                .map(|(i, l)| format!("{} (level {} of {n})", l.trim(), i + 1))
                .collect()
        }
    }
}

/// The options block with `order[k]` (an index into `options`) shown under
/// the k-th letter.
fn option_lines(options: &[String], order: &[usize]) -> String {
    order
        .iter()
        .enumerate()
        .map(|(k, &i)| format!("{}. {}", letter(k), options[i]))
        .collect::<Vec<_>>()
        .join("\n")
}

fn answer_line(n: usize) -> String {
    let l = letters(n);
    match n {
        2 => format!("Answer with one letter: {} or {}.", l[0], l[1]),
        _ => format!(
            "Answer with one letter: {} or {}.",
            l[..n - 1].join(", "),
            l[n - 1]
        ),
    }
}

/// The prompt for one item of `question`, its options shown in `order`.
pub fn ask(question: &Question, item: &str, order: &[usize]) -> Prompt {
    let options = options(&question.space);
    let intro = match &question.space {
        AnswerSpace::Judge { .. } => "Decide whether the answer is yes or no.",
        AnswerSpace::Choose(_) => "Choose the one option that applies.",
        AnswerSpace::Score(_) => "Place the item on this scale, lowest level first.",
    };
    let head = format!(
        "Question: {}\n{intro}\n\nOptions:\n{}\n\nItem:\n\"\"\"\n",
        question.text.trim(),
        option_lines(&options, order),
    );
    Prompt {
        system: SYSTEM.to_string(),
        user: format!(
            "{head}{}\n\"\"\"\n\n{}",
            item.trim(),
            answer_line(order.len())
        ),
        shared: head.len(),
    }
}

/// The four relations between two lessons, in the order of
/// [`crate::ledger::relate::RELATIONS`].
pub const RELATION_OPTIONS: [&str; 4] = [
    "The same lesson said twice: the same situation and the same action, in other words.",
    "They contradict: the same situation, but actions that cannot both be followed.",
    "Siblings: different but related situations where the same action applies.",
    "Distinct: anything else, including a different action that can be followed alongside the other.",
];

/// The prompt relating two lessons, the relations shown in `order`. The
/// options come before the lessons, as they come before the item in
/// [`ask`], so every pair of a batch shares the text up to its lessons (a
/// local model computes that once).
pub fn relate(a: &Lesson<'_>, b: &Lesson<'_>, order: &[usize]) -> Prompt {
    let options: Vec<String> = RELATION_OPTIONS.iter().map(|s| s.to_string()).collect();
    let head = format!(
        "Question: An agent learned two lessons, each \"WHEN situation -> PREFER action\". How \
         do they relate?\n\nOptions:\n{}\n\n",
        option_lines(&options, order),
    );
    Prompt {
        system: SYSTEM.to_string(),
        user: format!(
            "{head}Lesson 1: WHEN {} -> PREFER {}\nLesson 2: WHEN {} -> PREFER {}\n\n{}",
            a.when.trim(),
            a.prefer.trim(),
            b.when.trim(),
            b.prefer.trim(),
            answer_line(order.len())
        ),
        shared: head.len(),
    }
}

/// The item shown when measuring a model's prior for each label
/// (contextual calibration): it says nothing either way.
pub const CONTENT_FREE_ITEM: &str = "N/A";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::ChoiceOption;

    #[test]
    fn a_yes_no_prompt_shows_both_criteria_under_letters() {
        let q = Question {
            text: "Does the commit fix a bug?".into(),
            space: AnswerSpace::Judge {
                yes: "It repairs wrong behaviour".into(),
                no: "It adds or changes behaviour".into(),
            },
        };
        let p = ask(&q, "fix off-by-one in paging", &[0, 1]);
        assert!(
            p.user
                .contains("A. Yes: It repairs wrong behaviour\nB. No: It adds"),
            "{}",
            p.user
        );
        assert!(p.user.contains("fix off-by-one in paging"));
        assert!(p.user.ends_with("Answer with one letter: A or B."));
        // another order puts the no criterion under A
        let swapped = ask(&q, "x", &[1, 0]);
        assert!(swapped.user.contains("A. No: "), "{}", swapped.user);
        assert!(p.plain().ends_with("Answer:"));
        assert!(p.user[..p.shared].ends_with("Item:\n\"\"\"\n"));
        assert!(p.user[p.shared..].starts_with("fix off-by-one"));
    }

    #[test]
    fn choose_and_score_label_every_option() {
        let q = Question {
            text: "Which kind of change?".into(),
            space: AnswerSpace::Choose(vec![
                ChoiceOption {
                    label: "added".into(),
                    criterion: "new feature".into(),
                },
                ChoiceOption {
                    label: "fixed".into(),
                    criterion: "bug fix".into(),
                },
                ChoiceOption {
                    label: "removed".into(),
                    criterion: "dropped".into(),
                },
            ]),
        };
        let p = ask(&q, "x", &[0, 1, 2]);
        assert!(p.user.contains("C. removed: dropped"));
        assert!(p.user.ends_with("A, B or C."), "{}", p.user);
        let s = Question {
            text: "How severe?".into(),
            space: AnswerSpace::Score(vec!["low".into(), "high".into()]),
        };
        assert!(
            ask(&s, "x", &[0, 1])
                .user
                .contains("B. high (level 2 of 2)")
        );
    }

    #[test]
    fn a_relation_prompt_names_both_lessons() {
        let a = Lesson {
            when: "indenting Python",
            prefer: "use 4 spaces",
        };
        let b = Lesson {
            when: "indenting Python",
            prefer: "use tabs",
        };
        let p = relate(&a, &b, &[0, 1, 2, 3]);
        assert!(
            p.user
                .contains("Lesson 2: WHEN indenting Python -> PREFER use tabs")
        );
        assert!(p.user.contains("B. They contradict"));
        assert!(p.user.ends_with("A, B, C or D."));
        // the options, not the lessons, are shared by a batch
        assert!(p.user[..p.shared].ends_with("anything else, including a different action that can be followed alongside the other.\n\n"));
    }
}
