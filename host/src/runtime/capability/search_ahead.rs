//! `silt:ledger/searching-ahead`: the ledger engine's search for partners
//! by words, run on a core of its own while the engine searches by
//! meaning. The engine is one thread; the search reads only the texts, so
//! the runtime runs it on a second instance of the same engine (its
//! `partners` export: the engine's own code, in its own sandbox) and the
//! engine takes the lists when it needs them.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use wasmtime::component::{HasSelf, Linker, Resource};

use super::judge_calls::Pending;
use crate::bindings::ledger_engine::silt::ledger::searching_ahead as import;

pub use silt_core::ledger::candidates::PartnerLists;

/// Runs `partners.strongest` away from the engine's own instance (the
/// runtime's second instance; a trait so this capability does not depend
/// on how engines load).
pub trait PartnerSearcher: Send + Sync {
    /// The lists of `texts`, or what went wrong, said for a person.
    fn strongest(
        &self,
        texts: Vec<String>,
        search: import::PartnerSearch,
    ) -> Pending<'static, Result<PartnerLists, String>>;
}

/// Distinct texts below which a search is left to the engine: a second
/// instance starts in milliseconds, and the engine searches a few
/// thousand texts in about as long (natively, 42 µs a text on the
/// `agents` text; a few times that in the sandbox).
pub const HAND_OVER_FROM: usize = 2048;

/// One store's `searching-ahead`.
#[derive(Default)]
pub struct SearchAhead {
    searcher: Option<Arc<dyn PartnerSearcher>>,
    /// The searches started, by the handle's number: where each one's
    /// lists will come.
    started: HashMap<u32, tokio::sync::oneshot::Receiver<Result<PartnerLists, String>>>,
    next: u32,
    /// Signalled when the last search started finishes: the next waits
    /// for it, so searches take one spare core, not one each.
    last: Option<tokio::sync::oneshot::Receiver<()>>,
    /// Searches handed over since this store began, and those whose lists
    /// came back (the rest failed: the engine searched those itself).
    pub handed_over: Arc<AtomicU32>,
    pub answered: Arc<AtomicU32>,
    /// Cores this machine has: with one, there is none to spare.
    cores: usize,
}

impl SearchAhead {
    /// Searches run by `searcher`, where this machine has a core to spare.
    pub fn new(searcher: Option<Arc<dyn PartnerSearcher>>) -> Self {
        SearchAhead {
            searcher,
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            ..Default::default()
        }
    }
}

impl import::Host for SearchAhead {
    /// Searches on a thread of its own, at a lower priority
    /// ([`lower_priority`]), which ends with the search (a task on the
    /// runtime would wait in the engine's worker slot for as long as the
    /// engine computes; a thread of the blocking pool would keep the lower
    /// priority for whatever it runs next, since raising it back takes a
    /// privilege). Nothing is started without a second core, nor for
    /// fewer than [`HAND_OVER_FROM`] texts.
    async fn start_partners(
        &mut self,
        texts: Vec<String>,
        search: import::PartnerSearch,
    ) -> wasmtime::Result<Option<Resource<import::PendingSearch>>> {
        let Some(searcher) = self.searcher.clone() else {
            return Ok(None);
        };
        if texts.len() < HAND_OVER_FROM || self.cores < 2 {
            return Ok(None);
        }
        tracing::debug!("searching {} texts by words ahead", texts.len());
        let (done, finished) = tokio::sync::oneshot::channel::<()>();
        let previous = self.last.replace(finished);
        let runtime = tokio::runtime::Handle::current();
        let (answer, lists) = tokio::sync::oneshot::channel();
        let spawned = std::thread::Builder::new()
            .name("silt-search-ahead".into())
            .spawn(move || {
                lower_priority();
                let found = runtime.block_on(async move {
                    if let Some(previous) = previous {
                        // a search that failed sends nothing: its sender
                        // goes when its thread ends, which ends the wait
                        let _ = previous.await;
                    }
                    searcher.strongest(texts, search).await
                });
                let _ = done.send(());
                // nobody waits for a search the engine dropped
                let _ = answer.send(found);
            });
        if let Err(e) = spawned {
            tracing::warn!("no thread to search ahead on ({e}); the engine searches itself");
            return Ok(None);
        }
        self.handed_over.fetch_add(1, Ordering::Relaxed);
        self.next += 1;
        self.started.insert(self.next, lists);
        Ok(Some(Resource::new_own(self.next)))
    }
}

impl import::HostPendingSearch for SearchAhead {
    async fn finish(
        &mut self,
        call: Resource<import::PendingSearch>,
    ) -> wasmtime::Result<Result<PartnerLists, String>> {
        let Some(lists) = self.started.remove(&call.rep()) else {
            wasmtime::bail!("search {} is not pending", call.rep());
        };
        let lists = match lists.await {
            Ok(lists) => lists,
            Err(_) => Err("the search ahead stopped without an answer".to_string()),
        };
        if lists.is_ok() {
            self.answered.fetch_add(1, Ordering::Relaxed);
        }
        Ok(lists)
    }

    async fn drop(&mut self, call: Resource<import::PendingSearch>) -> wasmtime::Result<()> {
        // the search ends within its own sandbox's limits; its answer goes
        // nowhere
        self.started.remove(&call.rep());
        Ok(())
    }
}

/// Lowers the calling thread's scheduling priority for the rest of its
/// life: the search fills what the engine's thread and the judge's leave
/// of the machine, instead of taking a third of the engine's core
/// (`meaning` 3.25 / 3.32 → 2.96 / 3.01 s on 100k `agents` lessons).
fn lower_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: gettid and setpriority take and return plain integers; a
    // thread may always lower its own priority. A failure costs speed only
    unsafe {
        let tid = libc::gettid() as libc::id_t;
        libc::setpriority(libc::PRIO_PROCESS, tid, NICE);
    }
}

/// The search thread's nice value: about a tenth of nice 0's weight
/// under Linux's scheduler.
#[cfg(target_os = "linux")]
const NICE: libc::c_int = 10;

/// Links `searching-ahead` to the [`SearchAhead`] `get` finds.
pub fn add_to_linker<T: Send + 'static>(
    linker: &mut Linker<T>,
    get: fn(&mut T) -> &mut SearchAhead,
) -> wasmtime::Result<()> {
    import::add_to_linker::<T, HasSelf<SearchAhead>>(linker, get)
}

#[cfg(test)]
mod tests {
    use super::*;
    use import::{Host, HostPendingSearch, PartnerSearch};

    /// Says each text's partners are the texts after it, and records how
    /// many searches overlapped.
    struct Next {
        running: AtomicU32,
        most: AtomicU32,
        fail: bool,
    }

    impl PartnerSearcher for Next {
        fn strongest(
            &self,
            texts: Vec<String>,
            _search: PartnerSearch,
        ) -> Pending<'static, Result<PartnerLists, String>> {
            let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
            self.most.fetch_max(now, Ordering::SeqCst);
            std::thread::sleep(std::time::Duration::from_millis(20));
            self.running.fetch_sub(1, Ordering::SeqCst);
            let out = if self.fail {
                Err("the second instance ran out of memory".to_string())
            } else {
                Ok((0..texts.len())
                    .map(|i| vec![((i + 1) as u32, 0.5)])
                    .collect())
            };
            Box::pin(async move { out })
        }
    }

    fn search() -> PartnerSearch {
        PartnerSearch {
            threshold: 0.3,
            keep: 4,
            max_checks: Some(64),
        }
    }

    fn texts(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("text {i}")).collect()
    }

    fn next(fail: bool) -> Arc<Next> {
        Arc::new(Next {
            running: AtomicU32::new(0),
            most: AtomicU32::new(0),
            fail,
        })
    }

    /// A [`SearchAhead`] on a machine of `cores` cores.
    fn on_cores(searcher: Option<Arc<dyn PartnerSearcher>>, cores: usize) -> SearchAhead {
        SearchAhead {
            cores,
            ..SearchAhead::new(searcher)
        }
    }

    /// Searches come back as the searcher made them, one at a time; too
    /// few texts, no searcher or no second core start nothing.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn searches_ahead_come_back_whole_one_at_a_time() {
        let searcher = next(false);
        let mut one_core = on_cores(Some(searcher.clone()), 1);
        let started = one_core
            .start_partners(texts(HAND_OVER_FROM), search())
            .await
            .unwrap();
        assert!(started.is_none());
        let mut ahead = on_cores(Some(searcher.clone()), 2);
        let few = ahead
            .start_partners(texts(HAND_OVER_FROM - 1), search())
            .await
            .unwrap();
        assert!(few.is_none());
        let mut none = on_cores(None, 2);
        let nothing = none
            .start_partners(texts(HAND_OVER_FROM), search())
            .await
            .unwrap();
        assert!(nothing.is_none());

        let a = ahead
            .start_partners(texts(HAND_OVER_FROM), search())
            .await
            .unwrap();
        let b = ahead
            .start_partners(texts(HAND_OVER_FROM + 1), search())
            .await
            .unwrap();
        let (Some(a), Some(b)) = (a, b) else {
            panic!("a second core with enough texts started nothing");
        };
        let b = SearchAhead::finish(&mut ahead, b).await.unwrap().unwrap();
        let a = SearchAhead::finish(&mut ahead, a).await.unwrap().unwrap();
        assert_eq!(a.len(), HAND_OVER_FROM);
        assert_eq!(b.len(), HAND_OVER_FROM + 1);
        assert_eq!(a[7], vec![(8, 0.5)]);
        assert_eq!(searcher.most.load(Ordering::SeqCst), 1);
        assert_eq!(ahead.handed_over.load(Ordering::Relaxed), 2);
        assert_eq!(ahead.answered.load(Ordering::Relaxed), 2);
    }

    /// A searcher's failure is the engine's to hear (it then searches
    /// itself), not a trap.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_failed_search_ahead_is_said() {
        let mut ahead = on_cores(Some(next(true)), 2);
        let started = ahead
            .start_partners(texts(HAND_OVER_FROM), search())
            .await
            .unwrap()
            .expect("started");
        let said = SearchAhead::finish(&mut ahead, started).await.unwrap();
        assert_eq!(
            said.unwrap_err(),
            "the second instance ran out of memory".to_string()
        );
        assert_eq!(ahead.handed_over.load(Ordering::Relaxed), 1);
        assert_eq!(ahead.answered.load(Ordering::Relaxed), 0);
    }
}
