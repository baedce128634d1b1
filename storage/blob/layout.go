package blob

// ObjectName is where a Store keeps the object hash (a valid hex SHA-256),
// relative to the store's directory, with slashes: for tools that read a data
// directory without opening its Store (opening one empties its scratch
// directory, which a running server uses).
func ObjectName(hash string) string {
	return "objects/" + hash[:2] + "/" + hash[2:4] + "/" + hash
}

// ArchiveName is where an Archive keeps the copy of hash, relative to the
// archive's directory, with slashes.
func ArchiveName(hash string) string {
	return hash[:2] + "/" + hash + ".zst"
}
