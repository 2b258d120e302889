//! Intentionally empty: this package exists only so that `cargo metadata` downloads and
//! checksum-verifies the pinned bubblewrap source package (see `Cargo.toml` and
//! `scripts/build-bwrap.js`). Cargo requires every package to have a target.
