// Package codectest holds helpers for tests of the packages above the
// codec (index, fs, cmd and the interop and e2e tests), in the manner of
// testing/fstest: record files written with the codec's writers (to bytes
// or to a path), records to put in them, recordio framing built by hand,
// corrupters and a quiet logger. Fake sources are in
// index/source/sourcetest.
//
// It imports the format packages, so their own in-package tests cannot use
// it (that would be an import cycle); they keep their helpers.
package codectest
