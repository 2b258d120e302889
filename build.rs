use std::path::Path;

fn main() {
    napi_build::setup();
    bake_bundled_bwrap_digest();
    bake_helper_digest();
}

/// Embed the SHA-256 of `sandspawn-helper` as `SANDSPAWN_HELPER_SHA256`: the addon runs the helper
/// (on the host in front of bwrap, and inside every sandbox) only when its digest matches. From the
/// variable of that name when set, else from `sandspawn-helper.sha256`, which
/// scripts/build-helper.js writes (the helper is built before the addon). Without either, the
/// addon refuses to sandbox and says how to rebuild.
fn bake_helper_digest() {
    println!("cargo:rerun-if-env-changed=SANDSPAWN_HELPER_SHA256");
    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    let file = Path::new(&manifest_dir).join("sandspawn-helper.sha256");
    println!("cargo:rerun-if-changed={}", file.display());
    let text = match std::env::var("SANDSPAWN_HELPER_SHA256") {
        Ok(v) => v,
        Err(_) => std::fs::read_to_string(&file).unwrap_or_default(),
    };
    let digest = text.split_whitespace().next().unwrap_or("");
    if digest.len() == 64 && digest.bytes().all(|b| b.is_ascii_hexdigit()) {
        println!("cargo:rustc-env=SANDSPAWN_HELPER_SHA256={}", digest.to_ascii_lowercase());
    } else if !text.is_empty() {
        println!("cargo:warning={} does not hold a SHA-256 digest; the addon will refuse its helper", file.display());
    }
}

/// On Linux, embed the SHA-256 of the bundled bwrap (`sandspawn-bwrap`, built beforehand by
/// scripts/build-bwrap.js) as `SANDSPAWN_BUNDLED_BWRAP_SHA256`. The addon runs the bundled binary
/// only when its digest matches this one, so a replaced or corrupted file is refused. Without the
/// file (a build that skipped scripts/build-bwrap.js) the addon has no bundled bwrap and says so.
fn bake_bundled_bwrap_digest() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux") {
        return;
    }
    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    let file = Path::new(&manifest_dir).join("sandspawn-bwrap.sha256");
    println!("cargo:rerun-if-changed={}", file.display());
    let Ok(text) = std::fs::read_to_string(&file) else { return };
    let digest = text.split_whitespace().next().unwrap_or("");
    if digest.len() == 64 && digest.bytes().all(|b| b.is_ascii_hexdigit()) {
        println!("cargo:rustc-env=SANDSPAWN_BUNDLED_BWRAP_SHA256={}", digest.to_ascii_lowercase());
    } else {
        println!("cargo:warning={} does not hold a SHA-256 digest; the addon gets no bundled bwrap", file.display());
    }
}
