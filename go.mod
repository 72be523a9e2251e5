module github.com/cudago/cudago

go 1.26.8
