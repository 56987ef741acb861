//! One batch as prompts and back: which prompts a question over many items
//! (or a batch of lesson pairs) takes under the chosen corrections, and how
//! the label distributions read from the replies become one distribution
//! over the options per item. Shared by every language-model judge; only
//! the way a prompt reaches a model differs.

use super::debias::{self, Debias};
use super::prompt::{self, Prompt};
use super::read::ReadError;
use crate::ledger::relate::Lesson;
use crate::types::Question;

/// The prompts of one batch and where each item's answers come from.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Every prompt to send, in any order the transport likes.
    pub prompts: Vec<Prompt>,
    /// How many labelled options each prompt offers.
    pub options: usize,
    /// The option order of each rotation.
    orders: Vec<Vec<usize>>,
    /// Per rotation, the prompt measuring the model's prior (content-free
    /// item), when priors are divided out.
    priors: Vec<Option<usize>>,
    /// Per item, per rotation, its prompt.
    items: Vec<Vec<usize>>,
}

/// One item's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Probabilities over the options, in the question's order.
    Read(Vec<f64>),
    /// The model answered none of the labels under any rotation: no
    /// evidence either way (the reason is the model's top tokens).
    Unreadable(String),
}

impl Outcome {
    /// Probabilities over `n` options: no preference when the model gave
    /// none of the labels (its reply said nothing either way).
    pub fn probabilities(self, n: usize) -> Vec<f64> {
        match self {
            Outcome::Read(p) => p,
            Outcome::Unreadable(_) => vec![1.0 / n as f64; n],
        }
    }
}

impl Plan {
    fn build(
        options: usize,
        debias: Debias,
        n_items: usize,
        make: impl Fn(Option<usize>, &[usize]) -> Prompt,
    ) -> Plan {
        let orders = debias::orders(options, debias);
        let mut prompts = Vec::new();
        let priors = orders
            .iter()
            .map(|order| {
                debias.divides_prior().then(|| {
                    prompts.push(make(None, order));
                    prompts.len() - 1
                })
            })
            .collect();
        let items = (0..n_items)
            .map(|i| {
                orders
                    .iter()
                    .map(|order| {
                        prompts.push(make(Some(i), order));
                        prompts.len() - 1
                    })
                    .collect()
            })
            .collect();
        Plan {
            prompts,
            options,
            orders,
            priors,
            items,
        }
    }

    /// The prompts asking `question` of each item.
    pub fn ask(question: &Question, items: &[&str], debias: Debias) -> Plan {
        let n = question.space.criteria().len();
        Plan::build(n, debias, items.len(), |i, order| {
            let text = i.map_or(prompt::CONTENT_FREE_ITEM, |i| items[i]);
            prompt::ask(question, text, order)
        })
    }

    /// The prompts relating each pair of lessons.
    pub fn relate(pairs: &[(Lesson<'_>, Lesson<'_>)], debias: Debias) -> Plan {
        let blank = Lesson {
            when: prompt::CONTENT_FREE_ITEM,
            prefer: prompt::CONTENT_FREE_ITEM,
        };
        Plan::build(4, debias, pairs.len(), |i, order| match i {
            Some(i) => prompt::relate(&pairs[i].0, &pairs[i].1, order),
            None => prompt::relate(&blank, &blank, order),
        })
    }

    /// The labels of every prompt (A, B, ...).
    pub fn labels(&self) -> Vec<String> {
        prompt::letters(self.options)
    }

    /// Each item's outcome from the label distributions read for every
    /// prompt (`read[p]` for `prompts[p]`). A reply without any
    /// log-probabilities fails the batch: the server cannot serve this
    /// judge. A prior that could not be read is not divided out.
    pub fn outcomes(
        &self,
        read: &[Result<Vec<f64>, ReadError>],
    ) -> Result<Vec<Outcome>, ReadError> {
        if let Some(Err(ReadError::NoLogprobs)) = read
            .iter()
            .find(|r| matches!(r, Err(ReadError::NoLogprobs)))
        {
            return Err(ReadError::NoLogprobs);
        }
        let priors: Vec<Option<&Vec<f64>>> = self
            .priors
            .iter()
            .map(|p| p.and_then(|p| read[p].as_ref().ok()))
            .collect();
        Ok(self
            .items
            .iter()
            .map(|prompts| {
                let mut orders = Vec::new();
                let mut labels = Vec::new();
                let mut why = String::new();
                for (r, &p) in prompts.iter().enumerate() {
                    match &read[p] {
                        Ok(l) => {
                            orders.push(self.orders[r].clone());
                            labels.push(match priors[r] {
                                Some(prior) => debias::divide_prior(l, prior),
                                None => l.clone(),
                            });
                        }
                        Err(e) => why = e.to_string(),
                    }
                }
                if labels.is_empty() {
                    Outcome::Unreadable(why)
                } else {
                    Outcome::Read(debias::combine(&orders, &labels))
                }
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::AnswerSpace;

    fn yes_no() -> Question {
        Question {
            text: "Is it a fix?".into(),
            space: AnswerSpace::Judge {
                yes: "a fix".into(),
                no: "not a fix".into(),
            },
        }
    }

    #[test]
    fn prompts_per_item_follow_the_corrections() {
        let items = ["fix crash", "add flag", "docs"];
        assert_eq!(Plan::ask(&yes_no(), &items, Debias::None).prompts.len(), 3);
        assert_eq!(Plan::ask(&yes_no(), &items, Debias::Prior).prompts.len(), 4);
        assert_eq!(
            Plan::ask(&yes_no(), &items, Debias::Rotate).prompts.len(),
            6
        );
        assert_eq!(Plan::ask(&yes_no(), &items, Debias::Both).prompts.len(), 8);
        let pairs = [(
            Lesson {
                when: "a",
                prefer: "b",
            },
            Lesson {
                when: "c",
                prefer: "d",
            },
        )];
        let plan = Plan::relate(&pairs, Debias::Both);
        assert_eq!((plan.prompts.len(), plan.options), (8, 4));
    }

    #[test]
    fn a_model_leaning_on_a_is_corrected_and_a_real_answer_kept() {
        // the model says A with 0.9 on the content-free item, whatever order
        let plan = Plan::ask(&yes_no(), &["fix crash", "add flag"], Debias::Prior);
        let read = vec![
            Ok(vec![0.9, 0.1]),   // prior
            Ok(vec![0.97, 0.03]), // fix crash: leans further to A (yes)
            Ok(vec![0.6, 0.4]),   // add flag: less A than its prior: no
        ];
        let out = plan.outcomes(&read).unwrap();
        match (&out[0], &out[1]) {
            (Outcome::Read(a), Outcome::Read(b)) => {
                assert!(a[0] > 0.7, "{a:?}");
                assert!(b[1] > 0.7, "{b:?}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn unreadable_items_are_marked_and_a_server_without_logprobs_fails() {
        let plan = Plan::ask(&yes_no(), &["x"], Debias::None);
        let out = plan
            .outcomes(&[Err(ReadError::NoLabel("\"The\"".into()))])
            .unwrap();
        assert!(matches!(&out[0], Outcome::Unreadable(w) if w.contains("The")));
        assert_eq!(
            plan.outcomes(&[Err(ReadError::NoLogprobs)]),
            Err(ReadError::NoLogprobs)
        );
    }
}
