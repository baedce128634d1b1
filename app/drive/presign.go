package drive

// Presigned URLs: the three-step upload (RequestUpload returns a presigned
// PUT URL, ReceiveUpload stores the bytes, Confirm commits them through the
// content-write path) and presigned download URLs (PresignedURL).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"atrium/app"
)

// UploadRequest announces a three-step upload.
type UploadRequest struct {
	Name     string
	MimeType string
	Size     int64
	ParentID string
}

// UploadTicket answers an upload request (UploadResponse).
type UploadTicket struct {
	UploadURL string    `json:"upload_url"`
	Method    string    `json:"method"`
	Headers   Headers   `json:"headers"`
	ExpiresAt time.Time `json:"expires_at"`
	File      File      `json:"file"`
}

// Headers are the headers a presigned PUT must carry.
type Headers struct {
	ContentType string `json:"Content-Type"`
}

// PresignedURL is a presigned download URL and when it expires (the result of
// a download; "link" elsewhere in the drive is a share link).
type PresignedURL struct {
	URL       string    `json:"url"`
	ExpiresAt time.Time `json:"expires_at"`
}

// RequestUpload announces an upload: it returns a presigned PUT URL and the
// file the bytes will become — a pending new file, or the existing file of that
// name in the folder, which gains a version on confirmation. Errors:
// insufficient_scope (no drive:write), no_bound_user, feature_not_in_plan,
// validation_failed (the name, the size, a parent that is a file), not_found
// (no such parent folder, or not shared with the caller), forbidden (a parent
// shared for viewing), quota_exceeded, conflict (a folder of that name).
func (up *Uploads) RequestUpload(ctx context.Context, p *app.Principal, req UploadRequest) (UploadTicket, error) {
	if err := check(p, app.ScopeDriveWrite); err != nil {
		return UploadTicket{}, err
	}
	var v app.Validator
	name, err := CleanName("body.name", req.Name)
	if err != nil {
		v.Add("body.name", app.ErrorMessage(err), req.Name)
	}
	req.Name = name
	v.Check(req.Size >= 0, "body.size", "The size is a number of bytes, 0 or more.", req.Size)
	limit := up.maxPresignedUpload()
	v.Check(req.Size <= limit, "body.size", fmt.Sprintf("One upload is at most %d bytes; use the resumable upload for larger files.", limit), req.Size)
	if err := v.Err(); err != nil {
		return UploadTicket{}, err
	}
	now := up.core.clock.Now()
	mimeType := DetectMime(req.Name, req.MimeType)
	var ticket UploadTicket
	// The folder and the quota are read in the transaction, on the writer's
	// connection: no bytes wait on these checks, and a read there finds its
	// pages cached, where a reader's cache starts empty after every commit.
	err = up.core.store.InTx(ctx, func(ctx context.Context) error {
		parent, err := up.core.parentFolder(ctx, p, req.ParentID, "body.parent_id")
		if err != nil {
			return err
		}
		if err := up.core.quota(ctx, p, req.Size); err != nil {
			return err
		}
		owner := up.core.owner(p, parent)
		f, err := up.core.store.LiveChild(ctx, owner, req.ParentID, NameKey(req.Name))
		switch {
		case err == nil && f.IsFolder:
			return nameConflict(req.Name)
		case err == nil: // a new version of f on confirmation
		case app.ErrorCode(err) == app.ENotFound:
			f = File{ID: app.NewID(), OrgID: p.OrgID, OwnerID: owner, ParentID: strPtr(req.ParentID), Name: req.Name,
				MimeType: mimeType, MimeGroup: MimeGroup(mimeType), SizeBytes: req.Size, Status: StatusPending,
				Metadata: Metadata{Tags: []string{}, Custom: map[string]string{}}, CreatedAt: now, UpdatedAt: now}
			if parent != nil && parent.OwnerID == owner {
				f.OwnerName = parent.OwnerName // the same join, in the same transaction
			}
			if err := up.core.change(ctx, &f); err != nil {
				return err
			}
			if err := up.core.store.CreateFile(ctx, f); err != nil {
				return err
			}
		default:
			return err
		}
		u := Upload{ID: app.NewID() + app.RandomHex(8), FileID: f.ID, OrgID: p.OrgID, OwnerID: owner, CreatedBy: p.UserID,
			Name: req.Name, MimeType: mimeType, SizeBytes: req.Size, CreatedAt: now, ExpiresAt: now.Add(up.core.opts.UploadTTL)}
		if err := up.core.store.CreateUpload(ctx, u); err != nil {
			return err
		}
		if f, err = up.core.written(ctx, f); err != nil {
			return err
		}
		f.Permission = PermOwner
		if f.OwnerID != p.UserID {
			f.Permission = PermEdit
		}
		uploadURL, err := up.uploadURL(ctx, u.ID)
		if err != nil {
			return err
		}
		ticket = UploadTicket{UploadURL: uploadURL, Method: "PUT", Headers: Headers{ContentType: mimeType},
			ExpiresAt: u.ExpiresAt, File: f}
		return nil
	})
	return ticket, err
}

// ReceiveUpload stores the bytes of a presigned PUT for upload ref: the declared
// size and content type must match, the bytes stream to the blob store, and the
// upload remembers their hash for confirmation. No principal: the URL's
// signature authorised the request. contentLength is -1 when unknown.
//
// A body announced as small (Options.SmallBytes) is read first, and the
// upload, its checks and the quota are read in the transaction that stores
// it, on the writer's connection, whose pages stay cached (a reader's cache
// starts empty after every commit). A larger one is checked before its first
// byte is kept. Errors: not_found (an unknown or expired upload),
// validation_failed (another Content-Type or length than announced, more bytes
// than announced), bad_request (fewer bytes than announced), quota_exceeded.
func (up *Uploads) ReceiveUpload(ctx context.Context, ref, contentType string, contentLength int64, r io.Reader) (string, error) {
	small := contentLength >= 0 && up.core.SmallContent(contentLength)
	want := contentLength
	var u Upload
	if !small {
		var err error
		if u, err = up.receivable(ctx, ref, contentType, contentLength); err != nil {
			return "", err
		}
		want = u.SizeBytes
	}
	dg := newDigester(r)
	c, err := up.core.receive(ctx, dg, want, want)
	if err != nil {
		if errors.Is(err, ErrTooLarge) {
			return "", app.Invalid("body", fmt.Sprintf("The upload was announced as %d bytes; more arrived.", want), nil)
		}
		return "", fmt.Errorf("store upload bytes: %w", err)
	}
	if c.size != want {
		up.core.drop(ctx, c)
		return "", app.Errorf(app.EBadRequest, "The upload is incomplete: %d of %d bytes arrived.", c.size, want)
	}
	err = up.core.storeReferenced(ctx, c.withDigests(dg.sums()), nil, func(ctx context.Context) error {
		if small {
			var err error
			if u, err = up.receivable(ctx, ref, contentType, contentLength); err != nil {
				return err
			}
		}
		return up.core.store.SetUploadReceived(ctx, u.ID, FormatHash(c.hash), up.core.clock.Now())
	})
	return FormatHash(c.hash), err
}

// receivable returns upload ref if a presigned PUT of contentLength bytes
// (-1: unknown) of contentType may store its bytes: the upload is there and
// not expired, the type and the length are the announced ones, and the
// organisation has room for them.
func (up *Uploads) receivable(ctx context.Context, ref, contentType string, contentLength int64) (Upload, error) {
	u, err := up.core.store.Upload(ctx, ref)
	if app.ErrorCode(err) == app.ENotFound {
		return Upload{}, app.Errorf(app.ENotFound, "There is no such upload; request a new upload URL.")
	}
	if err != nil {
		return Upload{}, err
	}
	if up.core.clock.Now().After(u.ExpiresAt) {
		return Upload{}, app.Errorf(app.ENotFound, "The upload has expired; request a new upload URL.")
	}
	if contentType != "" && !sameMediaType(contentType, u.MimeType) {
		return Upload{}, app.Invalid("header.Content-Type", fmt.Sprintf("The upload was announced as %s; send that Content-Type.", u.MimeType), contentType)
	}
	if contentLength >= 0 && contentLength != u.SizeBytes {
		return Upload{}, app.Invalid("header.Content-Length", fmt.Sprintf("The upload was announced as %d bytes.", u.SizeBytes), contentLength)
	}
	// The quota again, before any byte is kept: the organisation may have
	// filled up since the upload was announced.
	plan, err := up.core.store.LinkPlan(ctx, u.OrgID, u.CreatedBy)
	if app.ErrorCode(err) == app.ENotFound {
		return Upload{}, app.Errorf(app.ENotFound, "There is no such upload; request a new upload URL.")
	}
	if err != nil {
		return Upload{}, err
	}
	if err := up.core.quota(ctx, &app.Principal{OrgID: u.OrgID, QuotaBytes: plan.QuotaBytes}, u.SizeBytes); err != nil {
		return Upload{}, err
	}
	return u, nil
}

// ErrTooLarge is what Blobs.Put returns (wrapped) for a stream over its limit.
var ErrTooLarge = errors.New("too large")

func sameMediaType(a, b string) bool {
	base := func(s string) string {
		m, _, _ := strings.Cut(s, ";")
		return strings.ToLower(strings.TrimSpace(m))
	}
	return base(a) == base(b)
}

// Confirm completes a three-step upload: the bytes must have arrived; the file
// becomes active (or gains a version) and visible. Errors: insufficient_scope
// (no drive:write), no_bound_user, feature_not_in_plan, not_found (no such
// item, or not shared with the caller), forbidden (a file shared for viewing),
// conflict (no upload of the caller's waiting or no bytes arrived, a folder of
// the name, a file in the trash or archived, a folder gone meanwhile), locked
// (a lock the caller does not hold), quota_exceeded.
func (up *Uploads) Confirm(ctx context.Context, p *app.Principal, fileID string) (File, error) {
	if err := check(p, app.ScopeDriveWrite); err != nil {
		return File{}, err
	}
	if up.core.opts.direct != nil {
		// Bytes a client PUT into the store are checked and received first,
		// as the node receives relayed ones.
		if err := up.takeStaged(ctx, p, fileID); err != nil {
			return File{}, err
		}
	}
	// The caller's upload names the content the file will reference. Every
	// read runs in the transaction that commits the confirmation, on the
	// writer's connection, whose pages stay cached (a reader's cache starts
	// empty after every commit), with the content held against the collector
	// (refMu) from before it is looked up until the commit.
	var out File
	up.core.refMu.RLock()
	defer up.core.refMu.RUnlock()
	err := up.core.writeTx(ctx, func(ctx context.Context) error {
		u, uerr := up.core.store.LatestUpload(ctx, fileID, p.UserID)
		if uerr != nil || u.ContentHash == "" {
			f, err := up.confirmable(ctx, p, fileID)
			if err != nil {
				return err
			}
			switch {
			case app.ErrorCode(uerr) == app.ENotFound && f.Status != StatusPending:
				out = f
				return app.Errorf(app.EConflict, "The file has no upload waiting for confirmation.")
			case app.ErrorCode(uerr) == app.ENotFound:
				return app.Errorf(app.EConflict, "No upload of yours is waiting for this file.")
			case uerr != nil:
				return uerr
			}
			return app.Errorf(app.EConflict, "No bytes have arrived for this upload yet; PUT them to upload_url, then confirm.")
		}
		if !up.core.blobs.Exists(ctx, blobName(u.ContentHash)) {
			return fmt.Errorf("blob %s vanished before it was referenced", blobName(u.ContentHash))
		}
		f, err := up.confirmable(ctx, p, fileID)
		if err != nil {
			return err
		}
		if err := up.core.checkWriteLock(ctx, p, f); err != nil {
			return err
		}
		res, err := up.core.commitContent(ctx, p, f, u.Name, u.MimeType, u.ContentHash, u.SizeBytes)
		if err != nil {
			return err
		}
		if err := up.core.store.DeleteUploads(ctx, []string{u.ID}); err != nil {
			return err
		}
		out = res
		return nil
	})
	if err != nil {
		return out, err
	}
	out.Permission = PermOwner
	if out.OwnerID != p.UserID {
		out.Permission = PermEdit
	}
	return out, nil
}

// confirmable returns file id, which a confirmation by p would change: a file
// p may edit, or a pending file p announced in a folder shared with p.
func (up *Uploads) confirmable(ctx context.Context, p *app.Principal, id string) (File, error) {
	f, err := up.core.access(ctx, p, id, PermEdit)
	if app.ErrorCode(err) == app.ENotFound {
		return up.core.sharedPending(ctx, p, id)
	}
	return f, err
}

// Download returns a presigned URL of the file's content. Errors:
// insufficient_scope (no drive:read), no_bound_user, feature_not_in_plan,
// not_found (no such item, or not shared with the caller), conflict (a folder,
// a pending upload, an archived file).
func (s *Service) Download(ctx context.Context, p *app.Principal, id string) (PresignedURL, error) {
	if err := check(p, app.ScopeDriveRead); err != nil {
		return PresignedURL{}, err
	}
	f, err := s.access(ctx, p, id, PermView)
	if err != nil {
		return PresignedURL{}, err
	}
	return s.presignedDownload(ctx, f, false)
}

func (s *Service) presignedDownload(ctx context.Context, f File, inline bool) (PresignedURL, error) {
	if f.IsFolder {
		return PresignedURL{}, app.Errorf(app.EConflict, "%q is a folder; download it as a ZIP archive: download.zip instead of download.", f.Name)
	}
	if f.Status == StatusPending {
		return PresignedURL{}, app.Errorf(app.EConflict, "The upload of %q is not confirmed yet.", f.Name)
	}
	if isCold(f) {
		return PresignedURL{}, archivedConflict(f)
	}
	now := s.clock.Now()
	u, err := s.downloadURL(ctx, f.Hash(), f.SizeBytes, f.Name, f.MimeType, inline && InlineSafe(f.MimeType))
	if err != nil {
		return PresignedURL{}, err
	}
	return PresignedURL{URL: u, ExpiresAt: now.Add(s.opts.URLTTL)}, nil
}
