// Package s3 holds the tests of recfs's S3 sources against a real S3
// server (versitygw, see test/internal/vgw): objects read through source/s3 and
// indexed through index.OpenSource must give the bytes and records of the
// same file read locally, and an object overwritten under a reader must fail
// its reads rather than mix versions.
package s3
