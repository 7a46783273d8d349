// Package interop checks recfs's codecs against the reference
// implementations of the formats it reads: goleveldb and pebble for leveldb
// logs, grailbio/base's recordio for recordio files. It holds only tests:
// round trips in both directions over randomized record-size mixes,
// byte-identity checks of the writers, SIGKILL crash tests of the appenders,
// and peer benchmarks of the scanners.
//
// The reference vectors are read from ../../../shared/vectors (shared/ beside
// the repository clone); the tests fail if they are missing.
package interop
