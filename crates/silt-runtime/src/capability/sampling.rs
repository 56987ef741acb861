//! `silt:host/sampling`: a judge granted it asks the model of the MCP
//! client whose tool call it serves. The MCP server names that client for
//! the length of the call ([`serving`]); a store made during the call
//! (the engine's, and the judge's it calls) takes it when it is made, on
//! the call's own task, so a judge reaches the client of its own call and
//! no other. Outside a call (the CLI, a background sleep pass) there is no
//! client and every request says so.

use std::future::Future;
use std::sync::Arc;

use futures::StreamExt;
use wasmtime::component::{HasSelf, Linker};

use super::judge_calls::Pending;
use crate::bindings::sampling_host::silt::host::sampling::{self, Reply, Request, SamplingError};

/// Requests to one client in flight at once: a client runs each on its
/// own model call, and may show each to its user.
const AT_ONCE: usize = 4;

/// The model of the MCP client a call came from, as the MCP server
/// reaches it (a trait, so this capability does not depend on rmcp).
pub trait ClientModel: Send + Sync {
    /// Why this client cannot sample (it did not declare the capability,
    /// its protocol forbids requests to it), or None when it can.
    fn unavailable(&self) -> Option<String>;
    /// One request, answered within the host's time limit.
    fn create_message(&self, request: Request) -> Pending<'_, Result<Reply, SamplingError>>;
}

tokio::task_local! {
    static CLIENT: Arc<dyn ClientModel>;
}

/// Runs `call` (one tool call) with `client` as the model its judges may
/// sample.
pub async fn serving<F: Future>(client: Arc<dyn ClientModel>, call: F) -> F::Output {
    CLIENT.scope(client, call).await
}

/// One store's sampling capability: the client of the call the store
/// serves, if it is granted one and there is one.
#[derive(Default)]
pub struct Sampling {
    granted: bool,
    client: Option<Arc<dyn ClientModel>>,
}

impl Sampling {
    /// For a plugin granted sampling (or not): the client of the tool call
    /// running on this task, if any.
    pub fn of_this_call(granted: bool) -> Self {
        let mut s = Sampling {
            granted,
            client: None,
        };
        s.renew();
        s
    }

    /// Takes the client of the tool call running on this task: a store
    /// kept warm between calls must never ask the client of an earlier
    /// one.
    pub fn renew(&mut self) {
        self.client = if self.granted {
            CLIENT.try_with(Arc::clone).ok()
        } else {
            None
        };
    }

    /// The client, or why there is none to sample.
    fn client(&self) -> Result<Arc<dyn ClientModel>, String> {
        let client = self.client.clone().ok_or_else(|| {
            "no MCP client is asking: only a tool call from an MCP client that declares the \
             sampling capability can be answered by its model (not silt's command line, nor \
             a sleep pass run in the background)"
                .to_string()
        })?;
        match client.unavailable() {
            Some(why) => Err(why),
            None => Ok(client),
        }
    }
}

impl sampling::Host for Sampling {
    async fn available(&mut self) -> Result<(), String> {
        self.client().map(drop)
    }

    async fn create_messages(
        &mut self,
        requests: Vec<Request>,
    ) -> Vec<Result<Reply, SamplingError>> {
        let client = match self.client() {
            Ok(c) => c,
            Err(why) => {
                return requests
                    .iter()
                    .map(|_| Err(SamplingError::Unavailable(why.clone())))
                    .collect();
            }
        };
        futures::stream::iter(requests)
            .map(|r| client.create_message(r))
            .buffered(AT_ONCE)
            .collect()
            .await
    }
}

/// Links `silt:host/sampling` to the [`Sampling`] `get` finds.
pub fn add_to_linker<T: Send + 'static>(
    linker: &mut Linker<T>,
    get: fn(&mut T) -> &mut Sampling,
) -> wasmtime::Result<()> {
    sampling::add_to_linker::<T, HasSelf<Sampling>>(linker, get)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bindings::sampling_host::silt::host::sampling::{Host, ModelPreferences};

    /// A client that answers every request with its user message, or
    /// cannot sample at all.
    struct Echo(Option<&'static str>);

    impl ClientModel for Echo {
        fn unavailable(&self) -> Option<String> {
            self.0.map(String::from)
        }
        fn create_message(&self, r: Request) -> Pending<'_, Result<Reply, SamplingError>> {
            Box::pin(async move {
                Ok(Reply {
                    text: r.user,
                    model: "echo".into(),
                })
            })
        }
    }

    fn request(user: &str) -> Request {
        Request {
            system: String::new(),
            user: user.into(),
            max_tokens: 10,
            temperature: None,
            preferences: ModelPreferences {
                hints: vec![],
                cost_priority: 0.0,
                speed_priority: 0.0,
                intelligence_priority: 0.0,
            },
        }
    }

    #[tokio::test]
    async fn a_store_made_outside_a_call_has_no_client_and_says_so() {
        let mut s = Sampling::of_this_call(true);
        let why = s.available().await.unwrap_err();
        assert!(why.contains("no MCP client is asking"), "{why}");
        let out = s.create_messages(vec![request("a")]).await;
        assert!(matches!(&out[0], Err(SamplingError::Unavailable(w)) if *w == why));
    }

    #[tokio::test]
    async fn a_store_made_during_a_call_asks_that_calls_client_in_order() {
        let mut s = serving(Arc::new(Echo(None)), async { Sampling::of_this_call(true) }).await;
        assert_eq!(s.available().await, Ok(()));
        let asked: Vec<Request> = (0..9).map(|i| request(&i.to_string())).collect();
        let out = s.create_messages(asked).await;
        let texts: Vec<String> = out.into_iter().map(|r| r.unwrap().text).collect();
        assert_eq!(texts, (0..9).map(|i| i.to_string()).collect::<Vec<_>>());
    }

    #[tokio::test]
    async fn a_kept_store_asks_the_client_of_its_current_call_and_an_ungranted_one_none() {
        let mut s = serving(Arc::new(Echo(Some("first"))), async {
            Sampling::of_this_call(true)
        })
        .await;
        serving(Arc::new(Echo(Some("second"))), async { s.renew() }).await;
        assert_eq!(s.available().await.unwrap_err(), "second");
        s.renew();
        assert!(s.available().await.unwrap_err().contains("no MCP client"));
        let mut ungranted = serving(Arc::new(Echo(None)), async {
            Sampling::of_this_call(false)
        })
        .await;
        assert!(ungranted.available().await.is_err());
    }

    #[tokio::test]
    async fn a_client_that_cannot_sample_gives_its_reason() {
        let mut s = serving(Arc::new(Echo(Some("no sampling declared"))), async {
            Sampling::of_this_call(true)
        })
        .await;
        assert_eq!(s.available().await.unwrap_err(), "no sampling declared");
        assert!(matches!(
            &s.create_messages(vec![request("a")]).await[0],
            Err(SamplingError::Unavailable(w)) if w == "no sampling declared"
        ));
    }
}
