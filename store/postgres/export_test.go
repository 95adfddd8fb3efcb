package postgres

// Waiting returns how many of db's Updates wait for the batch in progress.
func Waiting(db *DB) int { return db.batch.Waiting() }
