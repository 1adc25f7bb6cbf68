//! yard-profiles: the SQLite job-profile store (sqlx) and the regression of reduce time vs input size
//! (Dart eq. 9). Empty until the profile store lands (issue 7).
