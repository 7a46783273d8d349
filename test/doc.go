// Package test is recfs's nested test module: interoperability tests against
// the reference implementations (goleveldb, pebble, grailbio recordio),
// peer benchmarks, and end-to-end tests that build the recfs binary and mount
// real FUSE file systems. It is a separate Go module so that the product's
// go.mod stays small.
//
// Run it with `make test` from the repository root. The reference vectors are
// read from ../shared/vectors relative to the repository root.
package test
