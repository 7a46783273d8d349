package s3

import (
	"errors"
	"testing"

	"github.com/aws/smithy-go"
)

// TestExplain: SDK errors a user can act on read in the user's words and
// match their kind and the SDK error; others are left alone.
func TestExplain(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		kind error
		msg  string
	}{
		{&smithy.GenericAPIError{Code: "AccessDenied"}, ErrAccessDenied, "access denied to s3://b/k (check AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY or AWS_PROFILE)"},
		{&smithy.GenericAPIError{Code: "SignatureDoesNotMatch"}, ErrAccessDenied, "access denied to s3://b/k (check AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY or AWS_PROFILE)"},
		{&smithy.GenericAPIError{Code: "NoSuchBucket"}, ErrNoBucket, "bucket b does not exist (s3://b/k)"},
		{errors.New("operation error S3: HeadObject, get identity: get credentials: failed to refresh cached credentials, no EC2 IMDS role found"),
			ErrNoCredentials, "no AWS credentials found for s3://b/k (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE)"},
		{&smithy.GenericAPIError{Code: "InternalError"}, nil, ""},
	} {
		got := explain(tc.err, "b", "k")
		switch {
		case tc.kind == nil && got != nil:
			t.Errorf("%v: explained as %v", tc.err, got)
		case tc.kind == nil:
		case got == nil || got.Error() != tc.msg || !errors.Is(got, tc.kind) || !errors.Is(got, tc.err):
			t.Errorf("%v: got %v, want %q matching %v", tc.err, got, tc.msg, tc.kind)
		}
	}
}
