// Package codectest holds helpers for tests of recfs's codec and index
// packages, in the manner of testing/fstest: raw framing builders that do
// not go through the writers under test, corrupters, fake sources and
// quiet loggers. It imports only package codec, so that the format
// packages' own tests can use it.
package codectest
