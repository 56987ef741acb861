//! `silt:ledger/searching-ahead`: the ledger engine's searches run on a
//! core of their own while the engine goes on working: the search for
//! partners by words while it searches by meaning, and the whole-lesson
//! view's search by meaning while it searches the trigger view. The engine
//! is one thread; each search reads only what it is given, so the runtime
//! runs it on a second instance of the same engine (its `partners`
//! export: the engine's own code, in its own sandbox) and the engine
//! takes the answer when it needs it.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use tokio::sync::oneshot;
use wasmtime::component::{HasSelf, Linker, Resource};

use super::judge_calls::Pending;
use crate::bindings::ledger_engine::silt::ledger::searching_ahead as import;

pub use silt_core::ledger::candidates::PartnerLists;

/// Pairs near in meaning (`partners.near`).
pub type NearPairs = Vec<(u32, u32)>;

/// Runs the engine's `partners` functions away from the engine's own
/// instance (the runtime's second instance; a trait so this capability
/// does not depend on how engines load).
pub trait PartnerSearcher: Send + Sync {
    /// The lists of `texts`, or what went wrong, said for a person.
    fn strongest(
        &self,
        texts: Vec<String>,
        search: import::PartnerSearch,
    ) -> Pending<'static, Result<PartnerLists, String>>;

    /// `partners.near` of `rows`, or what went wrong, said for a person.
    fn near(
        &self,
        rows: Vec<i8>,
        dim: u32,
        cut: f64,
        per_row: u32,
    ) -> Pending<'static, Result<NearPairs, String>>;
}

/// Distinct texts (or rows of vectors) below which a search is left to
/// the engine: a second instance starts in milliseconds, and the engine
/// searches a few thousand texts in about as long (natively, 42 µs a text
/// on the `agents` text; a few times that in the sandbox).
pub const HAND_OVER_FROM: usize = 2048;

/// Where a search started will send its answer.
type Answer<T> = oneshot::Receiver<Result<T, String>>;

/// A search started: where its answer will come, and its claim, which
/// whoever sets first (the thread beginning it, or the engine taking it
/// back) decides whether it runs.
struct Started<T> {
    answer: Answer<T>,
    claimed: Arc<AtomicBool>,
}

impl<T> Started<T> {
    /// Takes the search back unless its thread has begun it.
    fn take_back(&self) -> bool {
        !self.claimed.swap(true, Ordering::SeqCst)
    }
}

/// One store's `searching-ahead`.
#[derive(Default)]
pub struct SearchAhead {
    searcher: Option<Arc<dyn PartnerSearcher>>,
    /// The searches started, by the handle's number: where each one's
    /// answer will come.
    started: HashMap<u32, Started<PartnerLists>>,
    started_near: HashMap<u32, Started<NearPairs>>,
    next: u32,
    /// Signalled when the last search started finishes: the next waits
    /// for it, so searches take one spare core, not one each.
    last: Option<oneshot::Receiver<()>>,
    /// Searches handed over since this store began, those whose answers
    /// came back, and those the engine took back before they began (the
    /// rest failed: the engine searched those and these itself).
    pub handed_over: Arc<AtomicU32>,
    /// Searches whose answers came back (see `handed_over`).
    pub answered: Arc<AtomicU32>,
    /// Searches the engine took back before they began (see `handed_over`).
    pub taken_back: Arc<AtomicU32>,
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

    /// Hands `search` (of `size` texts or rows) to a thread of its own, at
    /// a lower priority ([`lower_priority`]), after the search started
    /// before it, unless taken back by then: the handle's number and the
    /// search. None without a searcher, a second core, or
    /// [`HAND_OVER_FROM`] texts.
    ///
    /// A thread of its own, which ends with the search: a task on the
    /// runtime would wait in the engine's worker slot for as long as the
    /// engine computes, and a thread of the blocking pool would keep the
    /// lower priority for whatever it runs next (raising it back takes a
    /// privilege).
    fn hand_over<T: Send + 'static>(
        &mut self,
        size: usize,
        what: &str,
        search: impl FnOnce(Arc<dyn PartnerSearcher>) -> Pending<'static, Result<T, String>>
        + Send
        + 'static,
    ) -> Option<(u32, Started<T>)> {
        let searcher = self.searcher.clone()?;
        if size < HAND_OVER_FROM || self.cores < 2 {
            return None;
        }
        tracing::debug!("searching {size} {what} ahead");
        let (done, finished) = oneshot::channel::<()>();
        let previous = self.last.replace(finished);
        let runtime = tokio::runtime::Handle::current();
        let (answer, answered) = oneshot::channel();
        let claimed = Arc::new(AtomicBool::new(false));
        let claim = claimed.clone();
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
                    if claim.swap(true, Ordering::SeqCst) {
                        return Err("the search was taken back".to_string());
                    }
                    search(searcher).await
                });
                let _ = done.send(());
                // nobody waits for a search the engine dropped
                let _ = answer.send(found);
            });
        if let Err(e) = spawned {
            tracing::warn!("no thread to search ahead on ({e}); the engine searches itself");
            return None;
        }
        self.handed_over.fetch_add(1, Ordering::Relaxed);
        self.next += 1;
        let started = Started {
            answer: answered,
            claimed,
        };
        Some((self.next, started))
    }

    /// Waits for a search's answer; counts it when there is one.
    async fn answer<T>(&self, started: Started<T>) -> Result<T, String> {
        let found = match started.answer.await {
            Ok(found) => found,
            Err(_) => Err("the search ahead stopped without an answer".to_string()),
        };
        if found.is_ok() {
            self.answered.fetch_add(1, Ordering::Relaxed);
        }
        found
    }
}

impl import::Host for SearchAhead {
    /// Searches on a thread of its own ([`SearchAhead::hand_over`]).
    async fn start_partners(
        &mut self,
        texts: Vec<String>,
        search: import::PartnerSearch,
    ) -> wasmtime::Result<Option<Resource<import::PendingSearch>>> {
        let size = texts.len();
        let started = self.hand_over(size, "texts by words", move |searcher| {
            searcher.strongest(texts, search)
        });
        Ok(started.map(|(n, search)| {
            self.started.insert(n, search);
            Resource::new_own(n)
        }))
    }

    /// Searches on a thread of its own ([`SearchAhead::hand_over`]).
    async fn start_near(
        &mut self,
        rows: Vec<i8>,
        dim: u32,
        cut: f64,
        per_row: u32,
    ) -> wasmtime::Result<Option<Resource<import::PendingNear>>> {
        let size = rows.len().checked_div(dim as usize).unwrap_or(0);
        let started = self.hand_over(size, "rows by meaning", move |searcher| {
            searcher.near(rows, dim, cut, per_row)
        });
        Ok(started.map(|(n, search)| {
            self.started_near.insert(n, search);
            Resource::new_own(n)
        }))
    }
}

impl import::HostPendingSearch for SearchAhead {
    async fn finish(
        &mut self,
        call: Resource<import::PendingSearch>,
    ) -> wasmtime::Result<Result<PartnerLists, String>> {
        let Some(answer) = self.started.remove(&call.rep()) else {
            wasmtime::bail!("search {} is not pending", call.rep());
        };
        Ok(self.answer(answer).await)
    }

    async fn drop(&mut self, call: Resource<import::PendingSearch>) -> wasmtime::Result<()> {
        // one not begun never runs; one begun ends within its own
        // sandbox's limits, its answer going nowhere
        if let Some(search) = self.started.remove(&call.rep()) {
            search.take_back();
        }
        Ok(())
    }
}

impl import::HostPendingNear for SearchAhead {
    async fn finish(
        &mut self,
        call: Resource<import::PendingNear>,
    ) -> wasmtime::Result<Result<NearPairs, String>> {
        let Some(answer) = self.started_near.remove(&call.rep()) else {
            wasmtime::bail!("search {} is not pending", call.rep());
        };
        Ok(self.answer(answer).await)
    }

    /// Whoever claims the search first decides: its thread, beginning
    /// it, or this, taking it back.
    async fn take_back(&mut self, call: Resource<import::PendingNear>) -> wasmtime::Result<bool> {
        let Some(search) = self.started_near.get(&call.rep()) else {
            wasmtime::bail!("search {} is not pending", call.rep());
        };
        let taken = search.take_back();
        if taken {
            self.started_near.remove(&call.rep());
            self.taken_back.fetch_add(1, Ordering::Relaxed);
        }
        Ok(taken)
    }

    async fn drop(&mut self, call: Resource<import::PendingNear>) -> wasmtime::Result<()> {
        if let Some(search) = self.started_near.remove(&call.rep()) {
            search.take_back();
        }
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
    use import::{Host, HostPendingNear, HostPendingSearch, PartnerSearch};

    /// Says each text's partners are the texts after it (each row's pair
    /// the next row), and records how many searches overlapped.
    struct Next {
        running: AtomicU32,
        most: AtomicU32,
        searches: AtomicU32,
        /// While set, a search begun does not end (a gate the test opens).
        hold: AtomicBool,
        fail: bool,
    }

    impl Next {
        /// Runs one search, counting how many run at once.
        fn run<T>(&self, found: impl FnOnce() -> T) -> Result<T, String> {
            self.searches.fetch_add(1, Ordering::SeqCst);
            let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
            self.most.fetch_max(now, Ordering::SeqCst);
            std::thread::sleep(std::time::Duration::from_millis(20));
            while self.hold.load(Ordering::SeqCst) {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            self.running.fetch_sub(1, Ordering::SeqCst);
            match self.fail {
                true => Err("the second instance ran out of memory".to_string()),
                false => Ok(found()),
            }
        }
    }

    impl PartnerSearcher for Next {
        fn strongest(
            &self,
            texts: Vec<String>,
            _search: PartnerSearch,
        ) -> Pending<'static, Result<PartnerLists, String>> {
            let out = self.run(|| {
                (0..texts.len())
                    .map(|i| vec![((i + 1) as u32, 0.5)])
                    .collect()
            });
            Box::pin(async move { out })
        }

        fn near(
            &self,
            rows: Vec<i8>,
            dim: u32,
            _cut: f64,
            _per_row: u32,
        ) -> Pending<'static, Result<NearPairs, String>> {
            let n = (rows.len() / dim as usize) as u32;
            let out = self.run(|| (1..n).map(|j| (j - 1, j)).collect());
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
            searches: AtomicU32::new(0),
            hold: AtomicBool::new(false),
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
        // rows by meaning after texts by words, on the same one core
        let few_rows = ahead
            .start_near(vec![1; 3 * (HAND_OVER_FROM - 1)], 3, 0.5, 8)
            .await
            .unwrap();
        assert!(few_rows.is_none());
        let c = ahead
            .start_near(vec![1; 3 * HAND_OVER_FROM], 3, 0.5, 8)
            .await
            .unwrap();
        let (Some(a), Some(b), Some(c)) = (a, b, c) else {
            panic!("a second core with enough texts started nothing");
        };
        let c = HostPendingNear::finish(&mut ahead, c)
            .await
            .unwrap()
            .unwrap();
        let b = HostPendingSearch::finish(&mut ahead, b)
            .await
            .unwrap()
            .unwrap();
        let a = HostPendingSearch::finish(&mut ahead, a)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(a.len(), HAND_OVER_FROM);
        assert_eq!(b.len(), HAND_OVER_FROM + 1);
        assert_eq!(a[7], vec![(8, 0.5)]);
        assert_eq!(c.len(), HAND_OVER_FROM - 1);
        assert_eq!(c[7], (7, 8));
        assert_eq!(searcher.most.load(Ordering::SeqCst), 1);
        assert_eq!(ahead.handed_over.load(Ordering::Relaxed), 3);
        assert_eq!(ahead.answered.load(Ordering::Relaxed), 3);
    }

    /// A search by words that does not end until `searcher` is let go
    /// (its `hold` set), and a search by meaning started behind it.
    async fn near_behind_held_words(
        searcher: &Arc<Next>,
    ) -> (
        SearchAhead,
        Resource<import::PendingSearch>,
        Resource<import::PendingNear>,
    ) {
        let mut ahead = on_cores(Some(searcher.clone()), 2);
        searcher.hold.store(true, Ordering::SeqCst);
        let words = ahead
            .start_partners(texts(HAND_OVER_FROM), search())
            .await
            .unwrap()
            .expect("started");
        let near = ahead
            .start_near(vec![1; 2 * HAND_OVER_FROM], 2, 0.5, 8)
            .await
            .unwrap()
            .expect("started");
        (ahead, words, near)
    }

    /// A search by meaning not yet begun (waiting behind one by words) is
    /// taken back, and never runs; one begun is not, and finishes.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_search_not_begun_is_taken_back() {
        let searcher = next(false);
        let (mut ahead, words, waiting) = near_behind_held_words(&searcher).await;
        let taken = HostPendingNear::take_back(&mut ahead, waiting).await;
        assert!(taken.unwrap());
        searcher.hold.store(false, Ordering::SeqCst);
        let lists = HostPendingSearch::finish(&mut ahead, words).await.unwrap();
        assert_eq!(lists.unwrap().len(), HAND_OVER_FROM);
        // held once begun, so it is still running when taken back
        searcher.hold.store(true, Ordering::SeqCst);
        let begun = ahead
            .start_near(vec![1; 2 * HAND_OVER_FROM], 2, 0.5, 8)
            .await
            .unwrap()
            .expect("started");
        while searcher.searches.load(Ordering::SeqCst) < 2 {
            tokio::time::sleep(std::time::Duration::from_millis(1)).await;
        }
        let again = Resource::<import::PendingNear>::new_own(begun.rep());
        assert!(!HostPendingNear::take_back(&mut ahead, begun).await.unwrap());
        searcher.hold.store(false, Ordering::SeqCst);
        let pairs = HostPendingNear::finish(&mut ahead, again).await.unwrap();
        assert_eq!(pairs.unwrap().len(), HAND_OVER_FROM - 1);
        // the one taken back never ran: two searches, one at a time
        assert_eq!(searcher.searches.load(Ordering::SeqCst), 2);
        assert_eq!(searcher.most.load(Ordering::SeqCst), 1);
        assert_eq!(ahead.handed_over.load(Ordering::Relaxed), 3);
        assert_eq!(ahead.answered.load(Ordering::Relaxed), 2);
        assert_eq!(ahead.taken_back.load(Ordering::Relaxed), 1);
    }

    /// A search dropped before it began never runs.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_search_dropped_before_it_began_never_runs() {
        let searcher = next(false);
        let (mut ahead, words, dropped) = near_behind_held_words(&searcher).await;
        HostPendingNear::drop(&mut ahead, dropped).await.unwrap();
        searcher.hold.store(false, Ordering::SeqCst);
        let lists = HostPendingSearch::finish(&mut ahead, words).await.unwrap();
        assert_eq!(lists.unwrap().len(), HAND_OVER_FROM);
        // the dropped search's thread ends without running it
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        assert_eq!(searcher.searches.load(Ordering::SeqCst), 1);
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
        let said = HostPendingSearch::finish(&mut ahead, started)
            .await
            .unwrap();
        assert_eq!(
            said.unwrap_err(),
            "the second instance ran out of memory".to_string()
        );
        let started = ahead
            .start_near(vec![1; 2 * HAND_OVER_FROM], 2, 0.5, 8)
            .await
            .unwrap()
            .expect("started");
        let said = HostPendingNear::finish(&mut ahead, started).await.unwrap();
        assert_eq!(
            said.unwrap_err(),
            "the second instance ran out of memory".to_string()
        );
        assert_eq!(ahead.handed_over.load(Ordering::Relaxed), 2);
        assert_eq!(ahead.answered.load(Ordering::Relaxed), 0);
    }
}
