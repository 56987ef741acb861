//! The chat template: a prompt's system and user messages as the one text
//! the model was trained to continue, rendered from the Jinja template
//! the GGUF file carries (`tokenizer.chat_template`), the way Hugging Face
//! and llama.cpp render it.

use minijinja::{Environment, Error, ErrorKind, context};
use silt_core::closed::Prompt;
use silt_core::types::JudgeError;

/// A model's chat template, compiled.
pub struct ChatTemplate {
    env: Environment<'static>,
    bos: String,
    eos: String,
    /// The template refused a system message (Gemma's do): the system
    /// text is put at the head of the user message instead.
    fold_system: bool,
}

const NAME: &str = "chat";

fn raise_exception(message: String) -> Result<String, Error> {
    Err(Error::new(ErrorKind::InvalidOperation, message))
}

impl ChatTemplate {
    /// Compiles `source`; `bos` and `eos` are the model's own tokens, which
    /// templates may print.
    pub fn new(source: &str, bos: &str, eos: &str) -> Result<ChatTemplate, JudgeError> {
        let mut env = Environment::new();
        // Hugging Face templates call Python's str methods (.strip(), ...)
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        env.add_function("raise_exception", raise_exception);
        env.add_template_owned(NAME, source.to_string())
            .map_err(|e| {
                JudgeError::Unsupported(format!("the model's chat template does not parse ({e})"))
            })?;
        let mut template = ChatTemplate {
            env,
            bos: bos.to_string(),
            eos: eos.to_string(),
            fold_system: false,
        };
        let probe = Prompt {
            system: "s".into(),
            user: "u".into(),
            shared: 0,
        };
        if template.render(&probe).is_err() {
            template.fold_system = true;
            template.render(&probe)?;
        }
        Ok(template)
    }

    /// `prompt` as the text the model continues with its answer.
    pub fn render(&self, prompt: &Prompt) -> Result<String, JudgeError> {
        let messages = if self.fold_system {
            vec![
                context! { role => "user", content => format!("{}\n\n{}", prompt.system, prompt.user) },
            ]
        } else {
            vec![
                context! { role => "system", content => prompt.system },
                context! { role => "user", content => prompt.user },
            ]
        };
        self.env
            .get_template(NAME)
            .and_then(|t| {
                t.render(context! {
                    messages => messages,
                    add_generation_prompt => true,
                    bos_token => self.bos,
                    eos_token => self.eos,
                })
            })
            .map_err(|e| {
                JudgeError::Unsupported(format!("the model's chat template failed to render ({e})"))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SmolLM2-135M-Instruct's template, as its GGUF file carries it.
    const SMOLLM2: &str = "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";

    /// A template that refuses system messages, as Gemma's does.
    const NO_SYSTEM: &str = "{{ bos_token }}{% for message in messages %}{% if message['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}<start_of_turn>{{ message['role'] }}\n{{ message['content'] | trim }}<end_of_turn>\n{% endfor %}{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}";

    fn prompt() -> Prompt {
        Prompt {
            system: "Answer with a letter.".into(),
            user: "Question: Is it?\nA. Yes\nB. No".into(),
            shared: 0,
        }
    }

    #[test]
    fn chatml_puts_each_message_in_its_turn_and_opens_the_answer() {
        let t = ChatTemplate::new(SMOLLM2, "<|im_start|>", "<|im_end|>").unwrap();
        assert_eq!(
            t.render(&prompt()).unwrap(),
            "<|im_start|>system\nAnswer with a letter.<|im_end|>\n<|im_start|>user\nQuestion: \
             Is it?\nA. Yes\nB. No<|im_end|>\n<|im_start|>assistant\n"
        );
    }

    #[test]
    fn a_template_without_a_system_turn_gets_the_system_text_in_the_user_turn() {
        let t = ChatTemplate::new(NO_SYSTEM, "<bos>", "<eos>").unwrap();
        let text = t.render(&prompt()).unwrap();
        assert!(
            text.starts_with("<bos><start_of_turn>user\nAnswer with a letter.\n\nQuestion:"),
            "{text}"
        );
        assert!(text.ends_with("<start_of_turn>model\n"), "{text}");
    }

    #[test]
    fn a_broken_template_is_refused_with_the_reason() {
        let e = ChatTemplate::new("{% for m in messages %}", "", "")
            .err()
            .unwrap();
        assert!(e.to_string().contains("does not parse"), "{e}");
    }
}
