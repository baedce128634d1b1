// tusdpeer LISTEN ENDPOINT BUCKET ACCESS SECRET: tusd v2 with its own S3
// store (s3store) on a bucket, serving tus 1.0.0 at /api/v1/drive/tus/ (the
// path of Atrium's, so that one client times both), for bench/s3.sh.
package main

import (
	"log"
	"net/http"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/tus/tusd/v2/pkg/handler"
	"github.com/tus/tusd/v2/pkg/s3store"
)

func main() {
	if len(os.Args) != 6 {
		log.Fatal("usage: tusdpeer LISTEN ENDPOINT BUCKET ACCESS SECRET")
	}
	listen, endpoint, bucket, access, secret := os.Args[1], os.Args[2], os.Args[3], os.Args[4], os.Args[5]
	client := s3.New(s3.Options{
		Region:                     "us-east-1",
		BaseEndpoint:               aws.String(endpoint),
		UsePathStyle:               true,
		Credentials:                credentials.NewStaticCredentialsProvider(access, secret, ""),
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	})
	store := s3store.New(bucket, client)
	composer := handler.NewStoreComposer()
	store.UseIn(composer)
	const base = "/api/v1/drive/tus/"
	h, err := handler.NewHandler(handler.Config{BasePath: base, StoreComposer: composer})
	if err != nil {
		log.Fatal(err)
	}
	http.Handle(base, http.StripPrefix(base, h))
	log.Fatal(http.ListenAndServe(listen, nil))
}
