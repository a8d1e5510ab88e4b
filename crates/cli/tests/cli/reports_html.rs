//! `pathprof html` on a real program, loaded in headless Chromium: the hottest
//! path's lines are marked `hot-path` on load, another path can be selected by
//! its address, counts show in the margin, and a screenshot is kept in
//! `target/pathprof-artifacts/html-report.png` for a person to look at.

use crate::support::build::{build_fixture, line_of};
use crate::support::command::{pathprof_ok, succeed};
use std::path::{Path, PathBuf};
use std::process::Command;

const CHROMIUM: &str = "/usr/bin/chromium";

/// Where tests keep files a person may want to look at afterwards.
fn artifacts() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("the target directory")
        .join("pathprof-artifacts");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Chromium's command line for a headless, offline, throwaway profile.
fn chromium(profile_dir: &Path) -> Command {
    assert!(
        Path::new(CHROMIUM).exists(),
        "{CHROMIUM} is not installed: run scripts/install-deps.sh (it installs chromium)"
    );
    let mut c = Command::new("timeout");
    c.args([
        "120",
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
    ])
    .arg(format!("--user-data-dir={}", profile_dir.display()));
    c
}

/// The DOM of `url` after its scripts ran.
fn dump_dom(url: &str) -> String {
    let profile = tempfile::tempdir().unwrap();
    let out = succeed(chromium(profile.path()).args(["--dump-dom", url]));
    String::from_utf8(out.stdout).unwrap()
}

/// The opening tag of the element with `data-line="n"`.
fn line_tag(dom: &str, n: u32) -> &str {
    let needle = format!("data-line=\"{n}\"");
    let at = dom
        .find(&needle)
        .unwrap_or_else(|| panic!("no element for line {n}"));
    let start = dom[..at].rfind('<').unwrap();
    let end = at + dom[at..].find('>').unwrap();
    &dom[start..=end]
}

/// The text of the element with `data-line="n"` up to its end tag.
fn line_row(dom: &str, n: u32) -> &str {
    let tag = line_tag(dom, n);
    let start = dom.find(tag).unwrap();
    let end = start + dom[start..].find("</tr>").expect("a table row");
    &dom[start..end]
}

fn has_class(tag: &str, class: &str) -> bool {
    let Some(at) = tag.find("class=\"") else {
        return false;
    };
    let rest = &tag[at + 7..];
    rest[..rest.find('"').unwrap()]
        .split_whitespace()
        .any(|c| c == class)
}

#[test]
fn report_highlights_the_hottest_path_in_chromium() {
    let p = build_fixture("hot.c", "path");
    let profile = p.run(&["100"], "hot.pprof");
    let out = p.dir.path().join("html");
    pathprof_ok([
        "html".as_ref(),
        "--map".as_ref(),
        p.map.as_os_str(),
        profile.as_os_str(),
        "-o".as_ref(),
        out.as_os_str(),
    ]);
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(!index.contains("src=\"http"), "no external resources");
    let page_name = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .find(|n| n.ends_with("-hot.c.html"))
        .expect("a page for hot.c");
    assert!(
        index.contains(&format!("href=\"{page_name}")),
        "the index links the page"
    );
    let page = out.join(&page_name);
    let url = format!("file://{}", page.display());

    let hot = line_of(&p.source, "/* HOT */");
    let cold = line_of(&p.source, "/* COLD */");
    let never = line_of(&p.source, "/* NEVER */");
    let dom = dump_dom(&url);
    // The hottest path (step's HOT return, 172 of 200 calls) is selected.
    assert!(
        has_class(line_tag(&dom, hot), "hot-path"),
        "{}",
        line_tag(&dom, hot)
    );
    assert!(
        !has_class(line_tag(&dom, cold), "hot-path"),
        "{}",
        line_tag(&dom, cold)
    );
    assert!(!has_class(line_tag(&dom, never), "hot-path"));
    assert!(
        has_class(line_tag(&dom, never), "never"),
        "never-run lines are marked"
    );
    assert!(
        line_row(&dom, hot).contains(">172</td>"),
        "{}",
        line_row(&dom, hot)
    );
    assert!(
        line_row(&dom, cold).contains(">28</td>"),
        "{}",
        line_row(&dom, cold)
    );
    assert!(
        line_row(&dom, never).contains(">0</td>"),
        "{}",
        line_row(&dom, never)
    );
    assert!(
        dom.contains("<span class=\"pc\">172</span> <span class=\"ps\">86.0%</span>"),
        "the path list shows count and share"
    );
    assert!(
        dom.contains("class=\"path selected\""),
        "the selected path is marked"
    );

    // Selecting the COLD path by address: the script moves the highlight.
    let cold_item = dom
        .split("<li ")
        .find(|li| {
            li.contains("class=\"path")
                && li.split("data-lines=\"").nth(1).is_some_and(|l| {
                    l[..l.find('"').unwrap()]
                        .split(' ')
                        .any(|n| n == cold.to_string())
                })
        })
        .expect("a path through the COLD line");
    let id = cold_item.split("id=\"").nth(1).unwrap();
    let id = &id[..id.find('"').unwrap()];
    let dom = dump_dom(&format!("{url}#{id}"));
    assert!(
        has_class(line_tag(&dom, cold), "hot-path"),
        "{}",
        line_tag(&dom, cold)
    );
    assert!(
        !has_class(line_tag(&dom, hot), "hot-path"),
        "{}",
        line_tag(&dom, hot)
    );

    // A screenshot for a person to judge.
    let shot = artifacts().join("html-report.png");
    let _ = std::fs::remove_file(&shot);
    let profile_dir = tempfile::tempdir().unwrap();
    let status = chromium(profile_dir.path())
        .arg(format!("--screenshot={}", shot.display()))
        .arg("--window-size=1200,900")
        .arg(&url)
        .output()
        .unwrap();
    assert!(status.status.success());
    assert!(
        std::fs::metadata(&shot).is_ok_and(|m| m.len() > 10_000),
        "no screenshot at {}",
        shot.display()
    );
    // Keep the report itself beside it.
    let keep = artifacts().join("html-report");
    let _ = std::fs::remove_dir_all(&keep);
    std::fs::create_dir_all(&keep).unwrap();
    for e in std::fs::read_dir(&out).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), keep.join(e.file_name())).unwrap();
    }
}

#[test]
fn missing_sources_keep_their_counts() {
    let p = build_fixture("hot.c", "path");
    let profile = p.run(&["10"], "hot.pprof");
    let hot = line_of(&p.source, "/* HOT */");
    std::fs::remove_file(&p.source).unwrap();
    let out = p.dir.path().join("html");
    pathprof_ok([
        "html".as_ref(),
        "--map".as_ref(),
        p.map.as_os_str(),
        profile.as_os_str(),
        "-o".as_ref(),
        out.as_os_str(),
    ]);
    let page = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|n| n.to_string_lossy().ends_with("-hot.c.html"))
        .unwrap();
    let html = std::fs::read_to_string(page).unwrap();
    assert!(
        html.contains("not found"),
        "a note says the source is missing"
    );
    assert!(html.contains("--source-root"), "and how to point at it");
    // 20 calls of step, 18 through the HOT line.
    assert!(
        line_row(&html, hot).contains(">18</td>"),
        "{}",
        line_row(&html, hot)
    );
}
