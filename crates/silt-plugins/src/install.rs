//! Installing plugins: fetching one from a folder, an http(s) URL or an
//! OCI registry into a staging folder beside the installed ones, checking
//! it, and moving it into place with its pin in `plugins.lock`; and
//! publishing a plugin folder to a registry.
//!
//! A plugin travels as three files whatever the road: its manifest
//! (`plugin.toml`, byte for byte, since its digest is pinned and signed),
//! its component and, when signed, `plugin.sig`. In a registry they are
//! the layers of one OCI image manifest (see [`media`]).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use oci_client::Reference;

use super::lock::{self, LockFile, Pin};
use super::manifest::Manifest;
use super::signature::{SIGNATURE_FILE, SignatureFile, Signed, Trust};

/// The media types of a plugin in an OCI registry: an image manifest
/// whose config says "wasm" as the CNCF wasm artifact layout does, with
/// the component as an `application/wasm` layer and silt's two files as
/// layers of their own.
pub mod media {
    /// The image config's type; its blob says architecture wasm, os wasip2.
    pub const CONFIG: &str = "application/vnd.wasm.config.v0+json";
    /// The layer holding the component.
    pub const COMPONENT: &str = "application/wasm";
    /// The layer holding `plugin.toml`, byte for byte.
    pub const MANIFEST: &str = "application/vnd.silt.plugin.manifest.v1+toml";
    /// The layer holding `plugin.sig`, when the plugin is signed.
    pub const SIGNATURE: &str = "application/vnd.silt.plugin.signature.v1+toml";
}

/// The largest component accepted (a language runtime inside a component
/// is tens of MB; a model belongs in `silt models`, not in the plugin).
const MAX_COMPONENT: u64 = 256 << 20;
/// The largest manifest or signature file.
const MAX_TEXT: u64 = 1 << 20;

/// The largest files a fetch takes: [`MAX_COMPONENT`] and [`MAX_TEXT`]
/// but in tests, which shrink them rather than stream hundreds of MB.
#[derive(Debug, Clone, Copy)]
struct Caps {
    component: u64,
    text: u64,
}

const CAPS: Caps = Caps {
    component: MAX_COMPONENT,
    text: MAX_TEXT,
};

/// A download gathered as it arrives, refused the moment it would pass
/// its cap: a server that streams without end (or past what it declared)
/// costs at most the cap in memory, never the whole stream.
struct Gathered {
    bytes: Vec<u8>,
    cap: u64,
}

impl Gathered {
    /// Room is reserved for `expected` bytes when that is within the cap.
    fn new(cap: u64, expected: Option<u64>) -> Gathered {
        let room = expected.filter(|&n| n <= cap).unwrap_or(0);
        Gathered {
            bytes: Vec::with_capacity(room as usize),
            cap,
        }
    }

    /// Adds `chunk`; false, with nothing added, when it would pass the cap.
    fn add(&mut self, chunk: &[u8]) -> bool {
        let len = self.bytes.len() + chunk.len();
        if len as u64 > self.cap {
            return false;
        }
        if len > self.bytes.capacity() {
            // grow by doubling, but never past the cap (a plain extend
            // could double a 200 MB buffer to 400 MB)
            let room = len.max(self.bytes.len() * 2).min(self.cap as usize);
            self.bytes.reserve_exact(room - self.bytes.len());
        }
        self.bytes.extend_from_slice(chunk);
        true
    }
}

/// Where a plugin comes from.
#[derive(Debug, Clone)]
pub enum Origin {
    /// A local folder holding `plugin.toml`, as its canonical path.
    Folder(PathBuf),
    /// The URL of its `plugin.toml`; the component and `plugin.sig` are
    /// fetched from beside it.
    Url(url::Url),
    /// An OCI reference that names its registry host.
    Oci(Reference),
}

impl Origin {
    /// Reads a source as `silt plugins add` takes it: a folder, an
    /// `https://` URL of a `plugin.toml` (`http://` on loopback only), or
    /// an OCI reference (`oci://host/repo:tag`, `host/repo@sha256:…`).
    pub fn parse(text: &str) -> Result<Origin> {
        if let Some(rest) = text.strip_prefix("oci://") {
            return oci_reference(rest).map(Origin::Oci);
        }
        if text.starts_with("https://") || text.starts_with("http://") {
            let url = url::Url::parse(text).with_context(|| format!("'{text}' is not a URL"))?;
            if url.scheme() == "http" && !is_loopback(url.host_str().unwrap_or("")) {
                bail!(
                    "{text}: plain http is accepted on loopback only (anyone on the way could \
                     swap the plugin); use https"
                );
            }
            return Ok(Origin::Url(url));
        }
        let path = Path::new(text);
        if path.exists() {
            let dir = path
                .canonicalize()
                .with_context(|| format!("cannot read {text}"))?;
            if !dir.join("plugin.toml").is_file() {
                bail!(
                    "{} has no plugin.toml: a plugin folder holds its manifest and component",
                    dir.display()
                );
            }
            return Ok(Origin::Folder(dir));
        }
        if names_registry(text) {
            return oci_reference(text).map(Origin::Oci);
        }
        bail!(
            "'{text}' is neither a folder, an http(s) URL of a plugin.toml, nor an OCI reference \
             (oci://host/repo:tag or host/repo@sha256:…)"
        )
    }

    /// The source as the lock file records it, to fetch again.
    pub fn text(&self) -> String {
        match self {
            Origin::Folder(p) => p.display().to_string(),
            Origin::Url(u) => u.to_string(),
            Origin::Oci(r) => format!("oci://{}", r.whole()),
        }
    }
}

fn is_loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Whether a reference starts with a registry host (`host.name/…`,
/// `host:port/…`, `localhost/…`), as Docker tells a host from a namespace.
fn names_registry(text: &str) -> bool {
    let first = text.split('/').next().unwrap_or("");
    text.contains('/') && (first.contains('.') || first.contains(':') || first == "localhost")
}

fn oci_reference(text: &str) -> Result<Reference> {
    let reference: Reference = text.parse().with_context(|| {
        format!("'{text}' is not an OCI reference: write host/repository:tag or host/repository@sha256:…")
    })?;
    // a name without a registry would silently mean Docker Hub
    if !names_registry(text) {
        bail!("'{text}' names no registry: write it in full, host[:port]/repository:tag");
    }
    Ok(reference)
}

/// A plugin fetched into a staging folder, not yet installed.
pub struct Staged {
    /// The `.staging-*` folder inside the install dir; removed when dropped
    /// unless [`install`] moved it into place.
    pub dir: tempfile::TempDir,
    /// The fetched `plugin.toml`, parsed and checked.
    pub manifest: Manifest,
    /// `sha256:<hex>` of `plugin.toml`'s bytes: what the pin and a signature hold.
    pub manifest_digest: String,
    /// `sha256:<hex>` of the component's bytes.
    pub component_digest: String,
    /// The component's size in bytes.
    pub component_size: u64,
    /// Its `plugin.sig`, when the source has one.
    pub signature: Option<SignatureFile>,
    /// The OCI manifest digest the reference resolved to.
    pub resolved: Option<String>,
    /// The source as the lock file records it ([`Origin::text`]).
    pub source: String,
    /// Why the component is not a valid component, if it is not: told by
    /// [`check`] after the signature, so bytes changed after signing are
    /// named as that first.
    pub invalid: Option<String>,
}

/// The three files of a plugin as fetched.
struct Files {
    manifest: Vec<u8>,
    component: Vec<u8>,
    signature: Option<Vec<u8>>,
    resolved: Option<String>,
}

/// Fetches the plugin at `origin` into a staging folder in `install_dir`
/// (so moving it into place is one rename) and reads what it is.
pub async fn fetch(origin: &Origin, install_dir: &Path) -> Result<Staged> {
    fetch_capped(origin, install_dir, CAPS).await
}

async fn fetch_capped(origin: &Origin, install_dir: &Path, caps: Caps) -> Result<Staged> {
    silt_files::private::missing_folders(install_dir)
        .with_context(|| format!("cannot create {}", install_dir.display()))?;
    let files = match origin {
        Origin::Folder(dir) => from_folder(dir, caps)?,
        Origin::Url(url) => from_url(url, caps).await?,
        Origin::Oci(reference) => from_registry(reference, caps).await?,
    };
    let label = format!("plugin.toml from {}", origin.text());
    let text =
        std::str::from_utf8(&files.manifest).with_context(|| format!("{label} is not UTF-8"))?;
    let manifest = Manifest::parse(text, &label)?;
    let component_file = component_file(&manifest)?;
    let invalid = validate_component(&files.component)
        .err()
        .map(|e| format!("{component_file} from {} refused: {e:#}", origin.text()));
    let dir = tempfile::Builder::new()
        .prefix(".staging-")
        .tempdir_in(install_dir)?;
    std::fs::write(dir.path().join("plugin.toml"), &files.manifest)?;
    std::fs::write(dir.path().join(&component_file), &files.component)?;
    let signature = match &files.signature {
        Some(bytes) => {
            std::fs::write(dir.path().join(SIGNATURE_FILE), bytes)?;
            SignatureFile::read(dir.path())?
        }
        None => None,
    };
    Ok(Staged {
        manifest_digest: lock::digest(&files.manifest),
        component_digest: lock::digest(&files.component),
        component_size: files.component.len() as u64,
        manifest,
        signature,
        resolved: files.resolved,
        source: origin.text(),
        invalid,
        dir,
    })
}

/// The component's file name, which must stay inside the plugin folder.
fn component_file(manifest: &Manifest) -> Result<String> {
    let name = manifest.component_file().to_string_lossy().into_owned();
    let plain = Path::new(&name)
        .file_name()
        .map(|f| f.to_string_lossy().into_owned());
    if plain.as_deref() != Some(name.as_str()) || name == "plugin.toml" || name == SIGNATURE_FILE {
        bail!("the manifest's component '{name}' must be a plain file name beside plugin.toml");
    }
    Ok(name)
}

/// Refuses bytes that are not a valid WebAssembly component: junk is
/// turned away at install, not installed and then failing at every load.
/// Validation (wasmparser, the validator wasmtime itself runs) is a
/// fraction of what compiling costs, and every feature is let through:
/// what it checks is that this is a component at all.
fn validate_component(bytes: &[u8]) -> Result<()> {
    if !wasmparser::Parser::is_component(bytes) {
        if wasmparser::Parser::is_core_wasm(bytes) {
            bail!(
                "it is a core WebAssembly module, not a component: wrap it with `wasm-tools \
                 component new`"
            );
        }
        bail!("it is not a WebAssembly component (its first bytes are not a component header)");
    }
    wasmparser::Validator::new_with_features(wasmparser::WasmFeatures::all())
        .validate_all(bytes)
        .map_err(|e| anyhow::anyhow!("it is not a valid WebAssembly component: {e}"))?;
    Ok(())
}

/// The version of plugin `name` as installed in `install_dir`, when its
/// manifest there is the one its pin names (else it is unknown).
pub fn installed_version(install_dir: &Path, name: &str) -> Result<Option<String>> {
    let Some(pin) = LockFile::read(install_dir)?.plugins.remove(name) else {
        return Ok(None);
    };
    Ok(match Manifest::load_with_digest(&install_dir.join(name)) {
        Ok((manifest, digest)) if digest == pin.manifest => manifest.plugin.version,
        _ => None,
    })
}

fn read_capped(path: &Path, cap: u64) -> Result<Vec<u8>> {
    let size = std::fs::metadata(path)
        .with_context(|| format!("cannot read {}", path.display()))?
        .len();
    if size > cap {
        bail!(
            "{} is {size} bytes, more than the {cap} a plugin file may be",
            path.display()
        );
    }
    std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))
}

fn from_folder(dir: &Path, caps: Caps) -> Result<Files> {
    let manifest = read_capped(&dir.join("plugin.toml"), caps.text)?;
    let parsed = Manifest::parse(
        std::str::from_utf8(&manifest).context("plugin.toml is not UTF-8")?,
        &dir.join("plugin.toml").display().to_string(),
    )?;
    let component = read_capped(&dir.join(component_file(&parsed)?), caps.component)?;
    let sig = dir.join(SIGNATURE_FILE);
    let signature = if sig.is_file() {
        Some(read_capped(&sig, caps.text)?)
    } else {
        None
    };
    Ok(Files {
        manifest,
        component,
        signature,
        resolved: None,
    })
}

async fn get(client: &reqwest::Client, url: &url::Url, cap: u64) -> Result<Option<Vec<u8>>> {
    download(client.get(url.clone()), url, cap).await
}

/// Sends `request` (for `url`) and reads its body, no more than `cap`
/// bytes of it; None on a 404.
async fn download(
    request: reqwest::RequestBuilder,
    url: &url::Url,
    cap: u64,
) -> Result<Option<Vec<u8>>> {
    let mut response = request
        .send()
        .await
        .with_context(|| format!("cannot reach {url}"))?;
    if response.status() == reqwest::StatusCode::NOT_FOUND {
        return Ok(None);
    }
    if !response.status().is_success() {
        bail!("{url} answered {}", response.status());
    }
    let too_large = || format!("{url} is larger than the {cap} bytes a plugin file may be");
    if response.content_length().is_some_and(|n| n > cap) {
        bail!("{}", too_large());
    }
    // chunk by chunk: a chunked body has no length to check up front
    let mut body = Gathered::new(cap, response.content_length());
    while let Some(chunk) = response
        .chunk()
        .await
        .with_context(|| format!("reading {url}"))?
    {
        if !body.add(&chunk) {
            bail!("{} (stopped reading there)", too_large());
        }
    }
    Ok(Some(body.bytes))
}

async fn from_url(url: &url::Url, caps: Caps) -> Result<Files> {
    let client = reqwest::Client::builder()
        .timeout(std::time::Duration::from_secs(120))
        .build()?;
    let manifest = get(&client, url, caps.text)
        .await?
        .with_context(|| format!("{url} was not found (404)"))?;
    let parsed = Manifest::parse(
        std::str::from_utf8(&manifest).context("plugin.toml is not UTF-8")?,
        url.as_str(),
    )?;
    let component_url = url.join(&component_file(&parsed)?)?;
    let component = get(&client, &component_url, caps.component)
        .await?
        .with_context(|| format!("{component_url} was not found (404)"))?;
    let signature = get(&client, &url.join(SIGNATURE_FILE)?, caps.text).await?;
    Ok(Files {
        manifest,
        component,
        signature,
        resolved: None,
    })
}

/// A client for the registry of `reference`: plain http for a registry on
/// loopback (as a test or a local mirror runs it), https for any other.
fn registry_client(
    reference: &Reference,
) -> (oci_client::Client, oci_client::secrets::RegistryAuth) {
    use oci_client::client::{ClientConfig, ClientProtocol};
    let host = reference.registry();
    let bare = host.rsplit_once(':').map_or(host, |(h, _)| h);
    let protocol = if is_loopback(bare) {
        ClientProtocol::Http
    } else {
        ClientProtocol::Https
    };
    let client = oci_client::Client::new(ClientConfig {
        protocol,
        connect_timeout: Some(std::time::Duration::from_secs(10)),
        read_timeout: Some(std::time::Duration::from_secs(120)),
        ..Default::default()
    });
    // a private registry's account, from the environment only: never
    // written to silt.toml or the lock file
    let auth = match (
        silt_config::env::var("SILT_REGISTRY_USER"),
        silt_config::env::var("SILT_REGISTRY_PASSWORD"),
    ) {
        (Some(user), Some(password)) => oci_client::secrets::RegistryAuth::Basic(user, password),
        _ => oci_client::secrets::RegistryAuth::Anonymous,
    };
    (client, auth)
}

async fn from_registry(reference: &Reference, caps: Caps) -> Result<Files> {
    let (client, auth) = registry_client(reference);
    let whole = reference.whole();
    let (manifest, digest) = pull_manifest(&client, &auth, reference, caps.text)
        .await
        .with_context(|| format!("cannot pull {whole} from {}", reference.registry()))?;
    if let Some(pinned) = reference.digest()
        && pinned != digest
    {
        bail!("{whole}: the registry sent manifest {digest}, not the {pinned} asked for");
    }
    let mut files = Files {
        manifest: Vec::new(),
        component: Vec::new(),
        signature: None,
        resolved: Some(digest),
    };
    let mut found = (false, false);
    for layer in &manifest.layers {
        let (slot, cap) = match layer.media_type.as_str() {
            media::COMPONENT => {
                found.0 = true;
                (&mut files.component, caps.component)
            }
            media::MANIFEST => {
                found.1 = true;
                (&mut files.manifest, caps.text)
            }
            media::SIGNATURE => (files.signature.insert(Vec::new()), caps.text),
            other => {
                bail!("{whole} has a layer of type {other}, which is not part of a silt plugin")
            }
        };
        if layer.size < 0 || layer.size as u64 > cap {
            bail!(
                "{whole}: a {} layer of {} bytes is over the {cap} allowed",
                layer.media_type,
                layer.size
            );
        }
        *slot = pull_layer(&client, reference, layer)
            .await
            .with_context(|| format!("pulling the {} layer of {whole}", layer.media_type))?;
    }
    if found != (true, true) {
        bail!(
            "{whole} is not a silt plugin: it needs an {} layer and a {} layer (push one with \
             `silt plugins publish`)",
            media::COMPONENT,
            media::MANIFEST
        );
    }
    Ok(files)
}

/// The image manifest `reference` names, and its digest: read here
/// rather than by oci-client, which buffers a manifest whole whatever its
/// size, so that a registry streaming one without end is stopped at
/// `cap`. oci-client still does the registry's login dance, and keeps the
/// token for the layers.
async fn pull_manifest(
    client: &oci_client::Client,
    auth: &oci_client::secrets::RegistryAuth,
    reference: &Reference,
    cap: u64,
) -> Result<(oci_client::manifest::OciImageManifest, String)> {
    let token = client
        .auth(reference, auth, oci_client::RegistryOperation::Pull)
        .await?;
    let registry = reference.resolve_registry();
    let bare = registry.rsplit_once(':').map_or(registry, |(h, _)| h);
    let scheme = if is_loopback(bare) { "http" } else { "https" };
    let url = url::Url::parse(&format!(
        "{scheme}://{registry}/v2/{}/manifests/{}",
        reference.repository(),
        reference
            .digest()
            .unwrap_or_else(|| reference.tag().unwrap_or("latest"))
    ))?;
    let http = reqwest::Client::builder()
        .connect_timeout(std::time::Duration::from_secs(10))
        .timeout(std::time::Duration::from_secs(120))
        .build()?;
    let mut request = http.get(url.clone()).header(
        reqwest::header::ACCEPT,
        format!(
            "{}, {}",
            oci_client::manifest::OCI_IMAGE_MEDIA_TYPE,
            oci_client::manifest::IMAGE_MANIFEST_MEDIA_TYPE
        ),
    );
    request = match (token, auth) {
        (Some(token), _) => request.bearer_auth(token),
        (None, oci_client::secrets::RegistryAuth::Basic(user, password)) => {
            request.basic_auth(user, Some(password))
        }
        _ => request,
    };
    let body = download(request, &url, cap)
        .await?
        .with_context(|| format!("{url} was not found (404)"))?;
    let manifest = serde_json::from_slice(&body)
        .with_context(|| format!("{url} is not an OCI image manifest"))?;
    Ok((manifest, lock::digest(&body)))
}

/// The bytes of one layer, no more than its manifest declares: the
/// download stops the moment a registry sends more, and a sha256 digest is
/// checked as the bytes arrive, the moment the declared size is reached
/// (oci-client checks any digest again when the stream ends).
async fn pull_layer(
    client: &oci_client::Client,
    reference: &Reference,
    layer: &oci_client::manifest::OciDescriptor,
) -> Result<Vec<u8>> {
    use futures::StreamExt;
    use sha2::{Digest, Sha256};
    let declared = layer.size as u64;
    let mut stream = client.pull_blob_stream(reference, layer).await?;
    let mut body = Gathered::new(declared, Some(declared));
    let mut hasher = layer.digest.starts_with("sha256:").then(Sha256::new);
    while let Some(chunk) = stream.next().await {
        let chunk = chunk?;
        if !body.add(&chunk) {
            bail!(
                "the registry sent more than the {declared} bytes the image manifest declares \
                 for it (stopped reading there)"
            );
        }
        if let Some(h) = &mut hasher {
            h.update(&chunk);
            if body.bytes.len() as u64 == declared {
                let found = format!("sha256:{}", hex::encode(h.clone().finalize()));
                if found != layer.digest {
                    bail!(
                        "its {declared} bytes have digest {found}, not the {} declared",
                        layer.digest
                    );
                }
            }
        }
    }
    if (body.bytes.len() as u64) < declared {
        bail!(
            "the registry sent {} bytes, fewer than the {declared} the image manifest declares",
            body.bytes.len()
        );
    }
    Ok(body.bytes)
}

/// Pushes the plugin in folder `dir` to `reference`; returns the digest
/// of the manifest pushed, by which it can be added.
pub async fn publish(dir: &Path, reference: &Reference) -> Result<String> {
    use oci_client::client::{Config, ImageLayer};
    let files = from_folder(dir, CAPS)?;
    let title = |name: &str| {
        Some(std::collections::BTreeMap::from([(
            oci_client::annotations::ORG_OPENCONTAINERS_IMAGE_TITLE.to_string(),
            name.to_string(),
        )]))
    };
    let parsed = Manifest::load(dir)?;
    let mut layers = vec![
        ImageLayer::new(
            files.component,
            media::COMPONENT.into(),
            title(&component_file(&parsed)?),
        ),
        ImageLayer::new(files.manifest, media::MANIFEST.into(), title("plugin.toml")),
    ];
    if let Some(sig) = files.signature {
        layers.push(ImageLayer::new(
            sig,
            media::SIGNATURE.into(),
            title(SIGNATURE_FILE),
        ));
    }
    let config = Config::new(
        br#"{"architecture":"wasm","os":"wasip2"}"#.to_vec(),
        media::CONFIG.into(),
        None,
    );
    let (client, auth) = registry_client(reference);
    client
        .push(reference, &layers, config, &auth, None)
        .await
        .with_context(|| format!("cannot push to {}", reference.whole()))?;
    client
        .fetch_manifest_digest(reference, &auth)
        .await
        .with_context(|| format!("reading back the digest of {}", reference.whole()))
}

/// Whether [`install`] adds a new plugin or replaces an installed one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Refuses a plugin already installed or pinned under its name.
    Add,
    /// Replaces an installed plugin; refuses one that is not.
    Update,
}

/// Checks a staged plugin's signature against `trust`, then that its
/// component is one.
pub fn check(staged: &Staged, trust: &Trust) -> Result<Option<Signed>> {
    let signer = trust.check(
        &staged.manifest.plugin.name,
        staged.signature.as_ref(),
        &staged.component_digest,
        &staged.manifest_digest,
    )?;
    if let Some(why) = &staged.invalid {
        bail!("{why}");
    }
    Ok(signer)
}

/// Moves a staged plugin into `install_dir/<name>` and pins it, under the
/// lock file's lock. The folder an update replaces is kept until the new
/// pin is written, so a crash leaves either the old plugin and pin, or a
/// new folder that its old pin refuses to load (never unchecked bytes).
pub fn install(
    install_dir: &Path,
    staged: Staged,
    signer: Option<&Signed>,
    mode: Mode,
) -> Result<Pin> {
    let name = staged.manifest.plugin.name.clone();
    let target = install_dir.join(&name);
    let pin = Pin {
        source: staged.source.clone(),
        resolved: staged.resolved.clone(),
        component: staged.component_digest.clone(),
        manifest: staged.manifest_digest.clone(),
        signer: signer.map(|s| s.key.clone()),
    };
    let mut retired = None;
    LockFile::update(install_dir, |lock| {
        let present = target.exists() || lock.plugins.contains_key(&name);
        match mode {
            Mode::Add if present => bail!(
                "plugin '{name}' is already installed in {}; move it to this source with \
                 `silt plugins update {name} --from {}`",
                install_dir.display(),
                staged.source
            ),
            Mode::Update if !present => {
                bail!("plugin '{name}' is not installed; add it with `silt plugins add`")
            }
            _ => {}
        }
        if target.exists() {
            let old = install_dir.join(format!(".old-{name}-{}", std::process::id()));
            std::fs::rename(&target, &old)
                .with_context(|| format!("cannot move {}", target.display()))?;
            retired = Some(old);
        }
        let staging = staged.dir.path().to_path_buf();
        if let Err(e) = std::fs::rename(&staging, &target) {
            if let Some(old) = &retired {
                let _ = std::fs::rename(old, &target);
            }
            return Err(e)
                .with_context(|| format!("cannot move the plugin into {}", target.display()));
        }
        lock.plugins.insert(name.clone(), pin.clone());
        Ok(())
    })?;
    // the staging folder is the plugin now: nothing left to clean up
    let _ = staged.dir.keep();
    if let Some(old) = retired {
        let _ = std::fs::remove_dir_all(old);
    }
    Ok(pin)
}

/// Removes plugin `name` from `install_dir` and its pin.
pub fn remove(install_dir: &Path, name: &str) -> Result<Pin> {
    let target = install_dir.join(name);
    LockFile::update(install_dir, |lock| {
        let pin = lock.plugins.remove(name).with_context(|| {
            format!(
                "plugin '{name}' was not installed by `silt plugins add` in {}; a folder put \
                 there by hand is removed by hand",
                install_dir.display()
            )
        })?;
        if target.exists() {
            std::fs::remove_dir_all(&target)
                .with_context(|| format!("cannot remove {}", target.display()))?;
        }
        Ok(pin)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_are_read_and_unsafe_ones_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("plugin.toml"), "").unwrap();
        assert!(matches!(
            Origin::parse(dir.path().to_str().unwrap()).unwrap(),
            Origin::Folder(_)
        ));
        assert!(matches!(
            Origin::parse("https://example.com/p/plugin.toml").unwrap(),
            Origin::Url(_)
        ));
        assert!(matches!(
            Origin::parse("http://127.0.0.1:8080/plugin.toml").unwrap(),
            Origin::Url(_)
        ));
        let http = Origin::parse("http://example.com/plugin.toml")
            .unwrap_err()
            .to_string();
        assert!(http.contains("loopback only"), "{http}");
        for oci in [
            "oci://127.0.0.1:5000/silt/words:0.1.0",
            "ghcr.io/acme/judge@sha256:0123456789012345678901234567890123456789012345678901234567890123",
            "localhost:5000/judge:1",
        ] {
            let o = Origin::parse(oci).unwrap();
            assert!(matches!(o, Origin::Oci(_)), "{oci}");
            assert!(o.text().starts_with("oci://"));
        }
        let hub = Origin::parse("oci://judge:1").unwrap_err().to_string();
        assert!(hub.contains("names no registry"), "{hub}");
        let neither = Origin::parse("no-such-thing").unwrap_err().to_string();
        assert!(neither.contains("neither a folder"), "{neither}");
    }

    /// A body a test server sends: these bytes, or chunked zeros until
    /// `total` bytes went out or the client left.
    enum Body {
        Bytes(&'static str, Vec<u8>),
        Endless(u64),
    }

    /// A server on loopback answering each request (one a connection)
    /// with `route(path)`; counts the body bytes it got to send.
    async fn serve(
        route: impl Fn(&str) -> Body + Send + Sync + 'static,
    ) -> (u16, std::sync::Arc<std::sync::atomic::AtomicU64>) {
        use std::sync::atomic::Ordering;
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let server = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = server.local_addr().unwrap().port();
        let sent = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let counter = sent.clone();
        let route = std::sync::Arc::new(route);
        tokio::spawn(async move {
            loop {
                let (mut s, _) = server.accept().await.unwrap();
                let (route, sent) = (route.clone(), counter.clone());
                tokio::spawn(async move {
                    let mut head = Vec::new();
                    let mut buf = [0u8; 4096];
                    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                        match s.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => head.extend_from_slice(&buf[..n]),
                        }
                    }
                    let head = String::from_utf8_lossy(&head).into_owned();
                    let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
                    match route(&path) {
                        Body::Bytes(kind, body) => {
                            let mut reply = format!(
                                "HTTP/1.1 200 OK\r\ncontent-type: {kind}\r\ncontent-length: {}\r\n\
                                 connection: close\r\n\r\n",
                                body.len()
                            )
                            .into_bytes();
                            reply.extend(body);
                            let _ = s.write_all(&reply).await;
                        }
                        Body::Endless(total) => {
                            let head = "HTTP/1.1 200 OK\r\ncontent-type: application/octet-stream\r\n\
                                        transfer-encoding: chunked\r\nconnection: close\r\n\r\n";
                            if s.write_all(head.as_bytes()).await.is_err() {
                                return;
                            }
                            let chunk = [0u8; 64 << 10];
                            let mut framed = format!("{:x}\r\n", chunk.len()).into_bytes();
                            framed.extend_from_slice(&chunk);
                            framed.extend_from_slice(b"\r\n");
                            while sent.load(Ordering::SeqCst) < total {
                                if s.write_all(&framed).await.is_err() {
                                    return;
                                }
                                sent.fetch_add(chunk.len() as u64, Ordering::SeqCst);
                            }
                            let _ = s.write_all(b"0\r\n\r\n").await;
                        }
                    }
                });
            }
        });
        (port, sent)
    }

    /// The test caps: a download of more than 1 MiB is refused.
    const SMALL: Caps = Caps {
        component: 1 << 20,
        text: 1 << 20,
    };
    /// What an endless body sends at most: far past the cap, so a client
    /// that reads it whole is told apart from one that stops.
    const ENDLESS: u64 = 64 << 20;

    /// Fetches `source` with the small caps: its error, once the server
    /// is seen to have sent at most the cap plus what the kernel's socket
    /// buffers took in before the client stopped reading (a few MB on
    /// loopback), never the whole endless body.
    async fn refused_early(source: &str, sent: &std::sync::atomic::AtomicU64) -> String {
        let dir = tempfile::tempdir().unwrap();
        let origin = Origin::parse(source).unwrap();
        let err = match fetch_capped(&origin, dir.path(), SMALL).await {
            Ok(_) => panic!("{source} was fetched"),
            Err(e) => format!("{e:#}"),
        };
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        let sent = sent.load(std::sync::atomic::Ordering::SeqCst);
        assert!(
            sent < SMALL.component + (16 << 20),
            "the server got to send {sent} bytes: the download was read past its cap ({err})"
        );
        err
    }

    #[tokio::test]
    async fn an_endless_component_from_a_url_is_refused_at_the_cap() {
        let (port, sent) = serve(|path| match path {
            "/p/plugin.toml" => Body::Bytes(
                "text/plain",
                b"[plugin]\nname = \"p\"\nkind = \"judge\"\ncomponent = \"p.wasm\"\n".to_vec(),
            ),
            _ => Body::Endless(ENDLESS),
        })
        .await;
        let source = format!("http://127.0.0.1:{port}/p/plugin.toml");
        let err = refused_early(&source, &sent).await;
        assert!(
            err.contains("p.wasm is larger than the 1048576 bytes") && err.contains("stopped"),
            "{err}"
        );
    }

    /// What a fetch from a fake registry is refused with: its image
    /// manifest is `manifest` (endless when None), every blob endless.
    async fn refused_by_registry(manifest: Option<serde_json::Value>) -> String {
        let (port, sent) = serve(move |path| match &manifest {
            Some(m) if path.contains("/manifests/") => Body::Bytes(
                "application/vnd.oci.image.manifest.v1+json",
                m.to_string().into_bytes(),
            ),
            _ if path.contains("/manifests/") || path.contains("/blobs/") => Body::Endless(ENDLESS),
            _ => Body::Bytes("application/json", b"{}".to_vec()),
        })
        .await;
        refused_early(&format!("oci://127.0.0.1:{port}/silt/p:1"), &sent).await
    }

    #[tokio::test]
    async fn an_oci_layer_sending_more_than_declared_is_refused_at_once() {
        let declared = b"a small component";
        let manifest = serde_json::json!({
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {"mediaType": media::CONFIG, "digest": lock::digest(b"{}"), "size": 2},
            "layers": [{"mediaType": media::COMPONENT, "digest": lock::digest(declared),
                        "size": declared.len()}],
        });
        let err = refused_by_registry(Some(manifest)).await;
        assert!(
            err.contains("more than the 17 bytes the image manifest declares"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn an_endless_oci_image_manifest_is_refused_at_the_cap() {
        let err = refused_by_registry(None).await;
        assert!(
            err.contains("/silt/p/manifests/1 is larger than the 1048576 bytes"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn a_component_that_is_not_one_is_refused_after_its_signature() {
        let home = tempfile::tempdir().unwrap();
        let src = home.path().join("src");
        std::fs::create_dir_all(&src).unwrap();
        std::fs::write(
            src.join("plugin.toml"),
            "[plugin]\nname = \"p\"\nkind = \"judge\"\ncomponent = \"p.wasm\"\n",
        )
        .unwrap();
        let origin = Origin::parse(src.to_str().unwrap()).unwrap();
        let plugins = home.path().join("plugins");
        let header = b"\0asm\x0d\x00\x01\x00".to_vec();
        let mut junk_after_header = header.clone();
        junk_after_header.extend([0xff; 4096]);
        for (bytes, why) in [
            (vec![0x5a; 4 << 20], "not a WebAssembly component"),
            (b"\0asm\x01\0\0\0".to_vec(), "core WebAssembly module"),
            (junk_after_header, "not a valid WebAssembly component"),
        ] {
            std::fs::write(src.join("p.wasm"), &bytes).unwrap();
            let staged = fetch(&origin, &plugins).await.unwrap();
            let err = format!("{:#}", check(&staged, &Trust::default()).unwrap_err());
            assert!(err.contains("p.wasm from") && err.contains(why), "{err}");
            // signed, then changed: the signature is what is named
            let key = crate::signature::SecretKey::generate().unwrap();
            let mut signed = staged;
            signed.signature = Some(key.sign("p", &lock::digest(&header), &signed.manifest_digest));
            let err = format!("{:#}", check(&signed, &Trust::default()).unwrap_err());
            assert!(err.contains("does not match these bytes"), "{err}");
        }
        // nothing stays staged
        assert_eq!(std::fs::read_dir(&plugins).unwrap().count(), 0);
        // the smallest component there is passes
        std::fs::write(src.join("p.wasm"), &header).unwrap();
        check(&fetch(&origin, &plugins).await.unwrap(), &Trust::default()).unwrap();
    }

    #[test]
    fn a_component_file_stays_in_its_folder() {
        let m = |c: &str| {
            Manifest::parse(
                &format!("[plugin]\nname = \"p\"\nkind = \"judge\"\ncomponent = \"{c}\"\n"),
                "t",
            )
            .unwrap()
        };
        assert_eq!(component_file(&m("p.wasm")).unwrap(), "p.wasm");
        for bad in ["../p.wasm", "/etc/passwd", "sub/p.wasm", "plugin.toml"] {
            assert!(component_file(&m(bad)).is_err(), "{bad}");
        }
    }
}
