#!/usr/bin/env python3
"""Build and check claims.jsonl from the claim table below.

Run from docs/eval/verify/:
    python3 tools/build_claims.py          # writes claims.jsonl after checking
    python3 tools/build_claims.py --check  # only checks an existing claims.jsonl
"""
import json, re, sys, os
from collections import Counter

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

def normalise(text):
    """Source text with comment markers and line breaks removed (how notes are stored)."""
    out = []
    for line in text.splitlines():
        s = line.strip()
        for marker in ("///", "//!"):
            if s.startswith(marker):
                s = s[len(marker):].strip()
                break
        out.append(s)
    return re.sub(r"\s+", " ", " ".join(out)).strip()

# (source, prefix, [(label, alteration, claim, quote, note), ...]) -- order matters: split is by position.
T, A = "true", "altered"
TABLE = [
("sources/tokio/bounded.rs", "tokio-bounded", [
 (T, None, "A bounded tokio mpsc channel needs a buffer capacity of one or more messages.",
  "The provided buffer capacity must be at least 1.",
  "The provided buffer capacity must be at least 1."),
 (A, "figure", "Creating a bounded tokio mpsc channel panics if the buffer capacity is 1, or too large.", None,
  "Panics if the buffer capacity is 0, or too large."),
 (T, None, "Several places in the code can send into the same bounded channel by cloning the Sender, but a channel has just one Receiver.", None,
  "The `Sender` can be cloned to `send` to the same channel from multiple code locations. Only one `Receiver` is supported."),
 (A, "actor", "The `Receiver` can be cloned to `recv` from the same channel in multiple code locations; only one `Sender` is supported.", None,
  "Only one `Receiver` is supported."),
 (A, "negation", "If `send` is used as a branch in `tokio::select!` and another branch completes first, the message is not sent, but it is kept rather than dropped and lost.", None,
  "If `send` is used as a branch in [`tokio::select!`](crate::select) and another branch completes first, then it is guaranteed that the message was not sent. **However, in that case, the message is dropped and will be lost.**"),
 (A, "fabricated_quote", "Calling `blocking_send` from inside an asynchronous execution context causes a panic.",
  "This function panics if called from within a Tokio runtime.",
  "This function panics if called within an asynchronous execution context."),
 (A, "scope", "The channel is closed as soon as any sender has been dropped, or when `close` is called on the receiver.", None,
  "The channel is closed when all senders have been dropped, or when [`close`] is called."),
 (T, None, "If a reserved Permit is dropped without being used to send, its slot is given back to the channel.",
  "Dropping [`Permit`] without sending a message releases the capacity back",
  "Dropping [`Permit`] without sending a message releases the capacity back to the channel."),
]),
("sources/tokio/mutex.rs", "tokio-mutex", [
 (T, None, "Tokio's async Mutex hands the lock to tasks in first-in, first-out order, and this ordering is guaranteed.",
  "Tokio's Mutex operates on a guaranteed FIFO basis.",
  "Tokio's Mutex operates on a guaranteed FIFO basis."),
 (A, "negation", "Like `std::sync::Mutex`, this implementation poisons the mutex when a thread holding the `MutexGuard` panics.", None,
  "Note that in contrast to [`std::sync::Mutex`], this implementation does not poison the mutex when a thread holding the [`MutexGuard`] panics."),
 (A, "scope", "If the mutex is available to be acquired immediately, then a call to `lock` is guaranteed never to yield to the runtime, under all circumstances.", None,
  "If the mutex is available to be acquired immediately, then this call will typically not yield to the runtime. However, this is not guaranteed under all circumstances."),
 (T, None, "The only way `try_lock` on a tokio Mutex can fail is that the mutex is already held.", None,
  "`Mutex::try_lock` operation will only fail if the mutex is already locked."),
 (A, "actor", "`RwLock::try_read` operation will only fail if the lock is currently held by any reader or by an exclusive writer.", None,
  "`RwLock::try_write` operation will only fail if the lock is currently held by any reader or by an exclusive writer."),
 (T, None, "Because `get_mut` takes the Mutex by mutable borrow, it can hand out the data without doing any real locking.",
  "Since this call borrows the `Mutex` mutably, no actual locking needs to",
  "Since this call borrows the `Mutex` mutably, no actual locking needs to take place -- the mutable borrow statically guarantees no locks exist."),
 (A, "fabricated_quote", "A task that cancels its pending call to `lock` gives up its position in the wait queue.",
  "Cancelling a call to `lock` causes the task to lose its place in the queue.",
  "Cancelling a call to `lock` makes you lose your place in the queue."),
 (A, "actor", "When using the `tracing` unstable feature, a `Mutex` created with `Mutex::new` will not be instrumented and will not be visible in tokio-console.", None,
  "When using the `tracing` [unstable feature], a `Mutex` created with `const_new` will not be instrumented. As such, it will not be visible in [`tokio-console`]."),
]),
("sources/serde_json/README.md", "serde_json-readme", [
 (T, None, "Looking up a key that a JSON map does not contain, using square-bracket indexing on a serde_json `Value`, gives back `Value::Null`.",
  "the returned element is `Value::Null`.",
  "If the type of the data is not right for the type with which it is being indexed, or if a map does not contain the key being indexed, or if the index into a vector is out of bounds, the returned element is `Value::Null`."),
 (A, "figure", "You should expect in the ballpark of 500 to 1000 megabytes per second deserialization and 600 to 1200 megabytes per second serialization from serde_json, depending on your data.", None,
  "You should expect in the ballpark of 500 to 1000 megabytes per second deserialization and 600 to 900 megabytes per second serialization, depending on the characteristics of your data."),
 (A, "figure", "serde_json is competitive with the fastest C and C++ JSON libraries, or even 50% faster for many use cases.", None,
  "This is competitive with the fastest C and C++ JSON libraries or even 30% faster for many use cases."),
 (T, None, "Indexing a serde_json `Value` with square brackets borrows the data at that position, so what you get back is a `&Value`.", None,
  "The result of square bracket indexing like `v[\"name\"]` is a borrow of the data at that index, so the type is `&Value`."),
 (A, "actor", "There is also `serde_json::to_writer`, which serializes to a `Vec<u8>`, and `serde_json::to_vec`, which serializes to any `io::Write` such as a File or a TCP stream.", None,
  "There is also [`serde_json::to_vec`][to_vec] which serializes to a `Vec<u8>` and [`serde_json::to_writer`][to_writer] which serializes to any `io::Write` such as a File or a TCP stream."),
 (T, None, "serde_json can work without the rest of Rust's standard library, provided a memory allocator is available.",
  "As long as there is a memory allocator, it is possible to use serde_json without",
  "As long as there is a memory allocator, it is possible to use serde_json without the rest of the Rust standard library."),
 (A, "negation", "With the `json!` macro, Serde does not check at compile time that the value you are interpolating is able to be represented as JSON.", None,
  "Serde will check at compile time that the value you are interpolating is able to be represented as JSON."),
 (A, "fabricated_quote", "For JSON support in Serde without any memory allocator, the README points to the serde-json-core crate.",
  "For JSON support in Serde without an allocator, use the `serde-json-core` crate.",
  "For JSON support in Serde without a memory allocator, please see the [`serde-json-core`] crate."),
]),
("sources/tempfile/lib.rs", "tempfile-lib", [
 (T, None, "By default tempfile puts six random characters into each temporary file name, so an attacker would need to create billions of files before collisions become likely.",
  "Defaulting to 6 random characters per temporary file",
  "Defaulting to 6 random characters per temporary file forcing an attacker to create billions of files before random collisions are expected (at which point you probably have larger problems)."),
 (A, "figure", "tempfile re-seeds its random filename generator from system randomness after 5 failed attempts to create a temporary file, when the `getrandom` feature is enabled.", None,
  "Re-seeding the random filename generator from system randomness after 3 failed attempts to create temporary a file (when the `getrandom` feature is enabled as it is by default on all major platforms)."),
 (A, "actor", "`TempDir` and the unnamed files returned by `tempfile()` will fail to clean up if their destructors don't run.", None,
  "However `TempDir` and `NamedTempFile` will fail if their destructors don't run."),
 (T, None, "The shared-temporary-directory security issues do not concern Windows or macOS, because both give each user a private temporary directory by default.", None,
  "This section discusses security issues relevant to Unix-like operating systems that use shared temporary directories by default. Importantly, it's not relevant for Windows or macOS as both operating systems use private per-user temporary directories by default."),
 (A, "figure", "Before the umask is taken into account, permissions default to `0o600` for tempfiles and `0o755` for tempdirs.", None,
  "Permissions default to `0o600` for tempfiles and `0o777` for tempdirs. Note, this doesn't include effects of the current `umask`."),
 (T, None, "Under the usual 0o022 umask, new temporary files end up with mode 0o600 and new temporary directories with mode 0o755.",
  "the defaults yield `0o600` for tempfiles and `0o755` for tempdirs.",
  "For example, combined with the standard umask `0o022`, the defaults yield `0o600` for tempfiles and `0o755` for tempdirs."),
 (A, "scope", "Temporary files and temporary directories created with this library are both private by default on all operating systems.", None,
  "Temporary _files_ created with this library are private by default on all operating systems."),
 (A, "negation", "The `Builder::append` setting is honoured when the file is created through `Builder::make`.", None,
  "Note that [`Builder::append`] is ignored when using [`Builder::make`]."),
]),
("sources/reqwest/lib.rs", "reqwest-lib", [
 (T, None, "Out of the box, a reqwest Client follows HTTP redirects by itself, up to a chain of ten hops.",
  "maximum redirect chain of 10 hops",
  "By default, a `Client` will automatically handle HTTP redirects, having a maximum redirect chain of 10 hops."),
 (A, "figure", "By default, a reqwest `Client` will automatically handle HTTP redirects, with a maximum redirect chain of 20 hops.", None,
  "By default, a `Client` will automatically handle HTTP redirects, having a maximum redirect chain of 10 hops."),
 (A, "negation", "If both the all proxy and the HTTP or HTTPS proxy variables are set, the all proxy takes precedence over the more specific HTTP or HTTPS proxies.", None,
  "If both the all proxy and HTTP or HTTPS proxy variables are set the more specific HTTP or HTTPS proxies take precedence."),
 (T, None, "reqwest picks up system proxy settings unless you tell it otherwise.", None,
  "**NOTE**: System proxies are enabled by default."),
 (A, "scope", "When compiled for wasm, reqwest disables the `tls`, `cookie` and `blocking` features as well as every `ClientBuilder` method.", None,
  "Some of the features are disabled in wasm : [`tls`], [`cookie`], [`blocking`], as well as various `ClientBuilder` methods such as `timeout()` and `connector_layer()`."),
 (T, None, "reqwest's main Client is async and needs Tokio; an application making only a few requests may find the blocking API easier.",
  "is asynchronous (requiring Tokio)",
  "The [`reqwest::Client`][client] is asynchronous (requiring Tokio). For applications wishing to only make a few HTTP requests, the [`reqwest::blocking`](blocking) API may be more convenient."),
 (A, "actor", "`HTTP_PROXY` or `http_proxy` provide proxies for both HTTP and HTTPS connections.", None,
  "`ALL_PROXY` or `all_proxy` provide proxies for both HTTP and HTTPS connections."),
 (A, "fabricated_quote", "For many requests it is best to build one Client and reuse it, so keep-alive connection pooling can be used.",
  "If you plan to perform multiple requests, reuse a single `Client` to benefit from keep-alive connection pooling.",
  "**NOTE**: If you plan to perform multiple requests, it is best to create a [`Client`][client] and reuse it, taking advantage of keep-alive connection pooling."),
]),
("sources/rusqlite/README.md", "rusqlite-readme", [
 (T, None, "Plain rusqlite works with SQLite 3.45.3 and any later version.",
  "supports SQLite version 3.45.3 or newer",
  "The base `rusqlite` package supports SQLite version 3.45.3 or newer."),
 (T, None, "The `bundled` feature builds in its own copy of SQLite, which helps where linking to SQLite is awkward, for instance on Windows.", None,
  "`bundled` uses a bundled version of SQLite. This is a good option for cases where linking to SQLite is complicated, such as Windows."),
 (A, "fabricated_quote", "As of rusqlite 0.43.0 / libsqlite3-sys 0.40.0, the SQLite source embedded for the bundled features is version 3.54.1.",
  "the bundled SQLite is currently version 3.54.1",
  "This source is embedded in the `libsqlite3-sys` crate and is currently SQLite 3.54.1 (as of `rusqlite` 0.43.0 / `libsqlite3-sys` 0.40.0)."),
 (T, None, "With the vtab feature you can implement virtual tables in Rust, though for now they can only be read-only.",
  "Currently, only read-only virtual tables are supported.",
  "Currently, only read-only virtual tables are supported."),
 (A, "scope", "`fallible_uint` allows storing any value of type `u64`, `usize`, `NonZeroU64` or `NonZeroUsize`, whatever its size.", None,
  "`fallible_uint` allows storing values of type `u64`, `usize`, `NonZeroU64`, `NonZeroUsize` but only if <= `i64::MAX`."),
 (T, None, "Enabling `sqlcipher` makes rusqlite link against the SQLCipher library in place of SQLite, and it wins over `bundled`.", None,
  "`sqlcipher` looks for the SQLCipher library to link against instead of SQLite. This feature overrides `bundled`."),
 (A, "figure", "With `i128_blob`, each `i128` is stored internally as an 8 byte big-endian blob with the most significant bit flipped.", None,
  "Internally, the data is stored as a 16 byte big-endian blob, with the most significant bit flipped, which allows ordering and comparison between different blobs storing i128s to work as expected."),
 (T, None, "Unless a bundled feature is used, libsqlite3-sys tries to find a SQLite library already installed on the system via pkg-config, or Vcpkg for MSVC ABI builds.",
  "attempts to find a SQLite library that already exists on your system using pkg-config",
  "By default, `libsqlite3-sys` attempts to find a SQLite library that already exists on your system using pkg-config, or a [Vcpkg](https://github.com/Microsoft/vcpkg) installation for MSVC ABI builds."),
]),
("sources/regex/lib.rs", "regex-lib", [
 (T, None, "Every search in the regex crate is bounded by O(m * n) time in the worst case, with m tracking the size of the regex and n the size of the haystack.",
  "all regex searches in this crate have worst case",
  "In exchange, all regex searches in this crate have worst case `O(m * n)` time complexity, where `m` is proportional to the size of the regex and `n` is proportional to the size of the string being searched."),
 (T, None, "Look-around and backreferences are among the features the regex crate leaves out because nobody knows how to implement them efficiently.", None,
  "The regex syntax supported by this crate is similar to other regex engines, but it lacks several features that are not known how to implement efficiently. This includes, but is not limited to, look-around and backreferences."),
 (A, "figure", "By default, `\\w` matches around 14,000 distinct codepoints, which costs extra memory and slows regex compilation.", None,
  "For example, `\\w` by default matches around 140,000 distinct codepoints. This requires additional memory, and tends to slow down regex compilation."),
 (T, None, "Iterating over every match with find_iter or captures_iter can cost O(m * n^2) time in the worst case.",
  "the worst case time complexity for iterators is `O(m * n^2)`.",
  "Namely, since iterating over all matches can execute many searches, and each search can scan the entire haystack, the worst case time complexity for iterators is `O(m * n^2)`."),
 (A, "actor", "The worst case `O(m * n)` time bound does **not** apply to `Regex::is_match` or `Regex::captures`.", None,
  "It does **not** apply to [`Regex::find_iter`] or [`Regex::captures_iter`]."),
 (A, "negation", "A single `Regex` can be freely used from multiple threads simultaneously, and there is no synchronization cost to pay for it.", None,
  "While a single `Regex` can be freely used from multiple threads simultaneously, there is a small synchronization cost that must be paid."),
 (T, None, "Compiling a regex is guaranteed to take at most O(m) time, where m grows with the size of the regex.", None,
  "Finally, it's worth pointing out that regex compilation is guaranteed to take worst case `O(m)` time, where `m` is proportional to the size of regex."),
 (T, None, "Clones of a Regex still share the reference-counted, read-only part of the compiled state, while each thread gets fast access to the mutable space used for searching.", None,
  "The cloned regexes will still share the same internal read-only portion of its compiled state (it's reference counted), but each thread will get optimized access to the mutable space that is used to run a search."),
]),
("sources/walkdir/README.md", "walkdir-readme", [
 (T, None, "walkdir needs rustc 1.60.0 or later.",
  "minimum supported `rustc` version is `1.60.0`",
  "This crate's minimum supported `rustc` version is `1.60.0`."),
 (T, None, "walkdir can follow symbolic links, limit how many file descriptors it keeps open, and prune parts of the directory tree efficiently.", None,
  "Comes with support for following symbolic links, controlling the number of open file descriptors and efficient mechanisms for pruning the entries in the directory tree."),
 (A, "scope", "walkdir's performance is comparable with `find` and glibc's `nftw` on a warm file cache, but not on a cold one.", None,
  "The short story is that performance is comparable with `find` and glibc's `nftw` on both a warm and cold file cache."),
 (T, None, "Under walkdir's policy, a minor version update may raise the minimum Rust version it requires.", None,
  "The current policy is that the minimum Rust version required to use this crate can be increased in minor version updates."),
 (A, "fabricated_quote", "Under walkdir's stated policy, if version 1.0 needs Rust 1.20.0, then every 1.0.z release also needs only Rust 1.20.0 or newer, while a 1.y release may need a newer Rust.",
  "patch releases will never increase the minimum supported Rust version",
  "For example, if `crate 1.0` requires Rust 1.20.0, then `crate 1.0.z` for all values of `z` will also require Rust 1.20.0 or newer. However, `crate 1.y` for `y > 0` may require a newer minimum version of Rust."),
 (T, None, "On an SSD holding about three million entries, the author saw no performance difference between find, walkdir and nftw.",
  "(SSD, ~3 million entries)",
  "In fact, I cannot observe any performance difference after running `find /`, `walkdir /` and `nftw /` on my local file system (SSD, ~3 million entries)."),
 (A, "negation", "The author has recorded benchmarks, and here are some things you can try with a local checkout of `walkdir`.", None,
  "I haven't recorded any benchmarks, but here are some things you can try with a local checkout of `walkdir`:"),
 (T, None, "Filtering the iterator with filter_map to drop errors will quietly skip directories the running process is not permitted to access.", None,
  "Or, if you'd like to iterate over all entries and ignore any errors that may arise, use `filter_map`. (e.g., This code below will silently skip directories that the owner of the running process does not have permission to access.)"),
]),
("sources/indexmap/README.md", "indexmap-readme", [
 (T, None, "An IndexMap lets you find an entry either by its key or by its numeric position.",
  "allows lookup of entries by either hash table key or numerical index",
  "It preserves insertion order (except after removals), and it allows lookup of entries by either hash table key or numerical index."),
 (T, None, "indexmap took its inspiration from the new dict implementation in Python 3.6.", None,
  "This was inspired by Python 3.6's new dict implementation (which remembers the insertion order and is fast to iterate, and is compact in memory)."),
 (A, "actor", "The alternate `.swap_remove()` does preserve relative order, unlike `.shift_remove()`.", None,
  "The alternate `.shift_remove()` does preserve relative order."),
 (T, None, "indexmap's lookups use SIMD for the first 7-bit hash probe.",
  "the initial 7-bit hash lookup uses SIMD",
  "Lookup is fast-ish because the initial 7-bit hash lookup uses SIMD, and indices are densely stored."),
 (A, "scope", "indexmap preserves insertion order in every case, including after removals, and allows lookup by key or numerical index.", None,
  "It preserves insertion order (except after removals), and it allows lookup of entries by either hash table key or numerical index."),
 (T, None, "The crate first came out under the name ordermap and was later renamed indexmap.", None,
  "Note: this crate was originally released under the name `ordermap`, but it was renamed to `indexmap` to better reflect its features."),
 (A, "fabricated_quote", "Like the standard library's HashMap, indexmap uses hashbrown for its inner table.",
  "Uses hashbrown for the inner table, exactly like the standard library `HashMap`.",
  "Uses hashbrown for the inner table, just like Rust's libstd `HashMap` does."),
 (T, None, "When IndexMap was tried as rustc's hashmap in PR45282, performance came out roughly on par across the whole workload.", None,
  "In practice, `IndexMap` has been tested out as the hashmap in rustc in [PR45282] and the performance was roughly on par across the whole workload."),
]),
]

def build():
    rows = []
    for source, prefix, claims in TABLE:
        for i, (label, alt, claim, quote, note) in enumerate(claims, 1):
            rows.append({"id": f"{prefix}-{i:02d}", "source": source, "claim": claim,
                         "quote": quote, "label": label, "alteration": alt,
                         "split": "test" if i % 3 == 0 else "dev", "note": note})
    return rows

def check(rows):
    errors, cache = [], {}
    for r in rows:
        path = os.path.join(ROOT, r["source"])
        if path not in cache:
            raw = open(path, encoding="utf-8").read()
            cache[path] = (raw, normalise(raw))
        raw, norm = cache[path]
        lab, alt, q = r["label"], r["alteration"], r["quote"]
        if lab == "true" and alt is not None: errors.append((r["id"], "true claim with alteration"))
        if lab == "altered" and alt not in ("negation", "figure", "scope", "actor", "fabricated_quote"):
            errors.append((r["id"], "bad alteration"))
        if r["note"] not in norm: errors.append((r["id"], "note not in normalised source"))
        if alt == "fabricated_quote":
            if not q: errors.append((r["id"], "fabricated_quote without quote"))
            elif q in raw or q in norm: errors.append((r["id"], "fabricated quote IS in source"))
        elif q is not None:
            if q not in raw: errors.append((r["id"], "quote not an exact substring of source"))
        if r["claim"] in norm: errors.append((r["id"], "claim copied verbatim from source"))
    return errors

def summary(rows):
    c = Counter()
    for r in rows:
        c[("label", r["label"])] += 1
        c[("alteration", r["alteration"] or "none")] += 1
        c[("split", r["split"])] += 1
        c[("split x label", r["split"], r["label"])] += 1
        c[("split x alteration", r["split"], r["alteration"] or "none")] += 1
        c[("quote", "given" if r["quote"] else "null", r["label"])] += 1
    for k in sorted(c): print(" ".join(k), c[k])
    print("total", len(rows))

if __name__ == "__main__":
    out = os.path.join(ROOT, "claims.jsonl")
    if "--check" in sys.argv:
        rows = [json.loads(l) for l in open(out, encoding="utf-8") if l.strip()]
    else:
        rows = build()
    errs = check(rows)
    for e in errs: print("ERROR", *e)
    if errs: sys.exit(1)
    if "--check" not in sys.argv:
        with open(out, "w", encoding="utf-8") as f:
            for r in rows: f.write(json.dumps(r, ensure_ascii=False) + "\n")
        print("wrote", out)
    summary(rows)
