//! Build script: declares the app's command permissions and makes sure the UI folder exists.

use std::path::Path;

include!("src/command_names.rs");

/// Where `tauri.conf.json` (`build.frontendDist`) expects the built UI.
const UI_DIST: &str = "../ui/dist";

fn main() {
    ensure_ui_dist();
    println!("cargo:rerun-if-changed={UI_DIST}");
    println!("cargo:rerun-if-changed=../icons");
    let manifest = tauri_build::AppManifest::new().commands(COMMAND_NAMES);
    tauri_build::try_build(tauri_build::Attributes::new().app_manifest(manifest))
        .expect("tauri-build failed");
}

/// Tauri refuses to build without `frontendDist`. When the UI has not been built yet (for
/// example `cargo clippy --workspace` on a machine without Node), write a one-page placeholder
/// that says so; `npm --prefix ui run build` replaces it.
fn ensure_ui_dist() {
    let index = Path::new(UI_DIST).join("index.html");
    if index.exists() {
        return;
    }
    println!("cargo:warning=ui/dist is missing: embedding a placeholder page (run `npm --prefix ui ci && npm --prefix ui run build`)");
    std::fs::create_dir_all(UI_DIST).expect("create ui/dist");
    std::fs::write(
        &index,
        "<!doctype html><meta charset=utf-8><title>Lull</title>\
         <p>The Lull UI was not built. Run <code>npm --prefix ui ci &amp;&amp; \
         npm --prefix ui run build</code>, then rebuild the app.</p>\n",
    )
    .expect("write placeholder ui/dist/index.html");
}
