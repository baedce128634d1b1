package tus

import (
	"testing"

	"github.com/tus/tusd/v2/pkg/handler"

	"atrium/app/drive"
)

// FuzzUploadMetadata checks that an arbitrary Upload-Metadata header, parsed as
// tusd parses it and read as NewUpload reads it (filename or name, filetype or
// type, parent_id), then name-checked as CreateTusUpload does first, never
// panics. Upload-Offset and Upload-Length are parsed inside tusd's handler,
// which exports no parser to fuzz on its own.
func FuzzUploadMetadata(f *testing.F) {
	for _, s := range []string{
		"filename cmVwb3J0LnBkZg==,filetype YXBwbGljYXRpb24vcGRm,parent_id Zl8wMUpE",
		"name cGhvdG8uanBn,type aW1hZ2UvanBlZw==,relativePath bnVsbA==,is_confidential",
		"filename Li4vLi4vZXRjL3Bhc3N3ZA==", "filename", "filename !!!,", " , ,,", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		meta := handler.ParseMetadataHeader(header)
		name := meta["filename"]
		if name == "" {
			name = meta["name"]
		}
		_, _ = drive.CleanName("header.Upload-Metadata.filename", name)
	})
}
