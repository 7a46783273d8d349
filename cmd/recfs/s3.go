package main

import "github.com/spf13/pflag"

// Flags of the S3 sources: every command that takes a record file takes an
// s3://bucket/key URL too, reaching the store the way AWS tools do (the
// environment, ~/.aws/config and credentials, instance roles), with these
// for S3-compatible stores.
const (
	flagS3Endpoint  = "s3-endpoint"
	flagS3PathStyle = "s3-path-style"
	flagS3Region    = "s3-region"
	flagS3Cache     = "s3-cache"
	// Deadlines and bounds (s3.Options says what each bounds).
	flagS3ConnectTimeout   = "s3-connect-timeout"
	flagS3FirstByteTimeout = "s3-first-byte-timeout"
	flagS3IdleTimeout      = "s3-idle-timeout"
	flagS3RetryBudget      = "s3-retry-budget"
	flagS3Attempts         = "s3-attempts"
	flagS3ListMaxPages     = "s3-list-max-pages"
	flagS3ListMaxBytes     = "s3-list-max-bytes"
)

// registerS3Flags adds the S3 flags to a command's flag set.
func registerS3Flags(fs *pflag.FlagSet) {
	fs.String(flagS3Endpoint, "", "S3-compatible store for s3:// sources, http(s)://host[:port] (default $AWS_ENDPOINT_URL, else AWS)")
	fs.Bool(flagS3PathStyle, false, "path-style S3 addressing (automatic for an IP address or localhost endpoint)")
	fs.String(flagS3Region, "", "S3 region (default from the AWS configuration, else us-east-1)")
	fs.String(flagS3Cache, "64M", "memory cache of an s3:// object's bytes (1 MiB blocks)")
	fs.Duration(flagS3ConnectTimeout, s3DefaultConnect, "S3: longest wait for a connection")
	fs.Duration(flagS3FirstByteTimeout, s3DefaultFirstByte, "S3: longest wait for a response once the request is sent")
	fs.Duration(flagS3IdleTimeout, s3DefaultIdle, "S3: longest pause between the bytes of a request or response")
	fs.Duration(flagS3RetryBudget, s3DefaultRetryBudget, "S3: longest time for one request, all its attempts included, and for each MiB of a response; a read waits no longer (then EIO)")
	fs.Int(flagS3Attempts, s3DefaultAttempts, "S3: attempts of a request before it fails (pauses of 100ms, 200ms, ... between them)")
	fs.Int(flagS3ListMaxPages, s3DefaultListMaxPages, "S3: pages (of up to 1,000 keys) a directory listing may take; past it the listing ends with a log line")
	fs.String(flagS3ListMaxBytes, "64M", "S3: names (counted with 128 bytes each beside their length) a directory listing may hold; past it the listing ends with a log line")
}

// HTTP source flags (source/httprange.Options says what each bounds).
const (
	flagHTTPTimeout = "http-timeout"
	flagHTTPCache   = "http-cache"
)

// registerHTTPFlags adds the http(s):// source flags to a command's flag
// set.
func registerHTTPFlags(fs *pflag.FlagSet) {
	fs.Duration(flagHTTPTimeout, httpDefaultTimeout, "http(s):// sources: longest time for one request, its attempts and its body included; a read waits no longer (then EIO)")
	fs.String(flagHTTPCache, "64M", "memory cache of an http(s):// file's bytes (1 MiB blocks)")
}
