"""The LMS's side of a term: a download read without trusting it, collected into the course, grades exported."""
