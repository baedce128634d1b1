-- +goose Up
-- One share per item and user: sharing the item with the same user again
-- changes that share's permission and expiry.
CREATE UNIQUE INDEX drive_shares_file_user ON drive_shares(file_id, user_id) WHERE user_id IS NOT NULL;

-- +goose Down
DROP INDEX drive_shares_file_user;
