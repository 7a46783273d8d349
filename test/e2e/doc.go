// Package e2e is recfs's end-to-end suite: it builds the recfs binary once,
// mounts real FUSE file systems with it in subprocesses (both backends),
// and checks them with the tools users run — ls, cat, grep -r, cp, dd, tee —
// against the reference vectors' manifests and the reference readers.
//
// RECFS_TEST_FUSE selects what happens without /dev/fuse: "" skips with the
// reason, "0" skips always, "1" (set by .ci/run) fails. RECFS_TEST_LARGE=N
// turns on the large runs: a record directory of N records (e.g. 1000000,
// with its RSS bound) and 10k×2 concurrent appends instead of 1k×2.
package e2e
