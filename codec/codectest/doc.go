// Package codectest holds helpers for tests of recfs's codec and of the
// packages above it, in the manner of testing/fstest: recordio framing
// built by hand (not by the writer under test), records to put in files,
// corrupters, a quiet logger, a driver of any format's scanner (ScanAll)
// and protobuf messages built by hand (Message). It imports only the
// standard library, logrus and protowire, so the format packages' own
// tests use it too; record files written through the codec's writers are
// in codectest/recfile, fake sources in source/sourcetest.
package codectest
