/*
 * support_pem.h — a certificate authority for the kubeconfig tests (a
 * throwaway self-signed EC certificate; its key was never kept).
 */
#ifndef TESTS_SUPPORT_PEM_H
#define TESTS_SUPPORT_PEM_H

static const char *const CA_PEM __attribute__((unused)) =
    "-----BEGIN CERTIFICATE-----\n"
    "MIIBkjCCATegAwIBAgIUTBTIAldFe7FtoZ/bsO8vhDTnfekwCgYIKoZIzj0EAwIw\n"
    "HTEbMBkGA1UEAwwSdGVzdC1rdWJlY29uZmlnLWNhMCAXDTI2MTIwNDEyMzcyNloY\n"
    "DzIxMjYxMTEwMTIzNzI2WjAdMRswGQYDVQQDDBJ0ZXN0LWt1YmVjb25maWctY2Ew\n"
    "WTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAASshpMtw5XH5ABZwapSCsoIbJHRxq5T\n"
    "eih6Et4rG42Shjfj2HJYH7R/QbsS4ku+Gp1UndsBdNCq7WnnXHA9D3ldo1MwUTAd\n"
    "BgNVHQ4EFgQUSg08c2/9hli06mDItkCvxVCum0cwHwYDVR0jBBgwFoAUSg08c2/9\n"
    "hli06mDItkCvxVCum0cwDwYDVR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNJADBG\n"
    "AiEA09Nl0Og0qXgPTNa7ZK0XyJn90Mx49F3oKEb/36v8mYkCIQCG34sJ2DFCggSU\n"
    "+n3in7hnIkH6mpSSsorVbi+Yl5+t8A==\n"
    "-----END CERTIFICATE-----\n";
#define CA_B64                                                                                     \
    "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJrakNDQVRlZ0F3SUJBZ0lVVEJUSUFsZEZlN0Z0b1ovYnNPOHZo" \
    "RFRuZmVrd0NnWUlLb1pJemowRUF3SXcKSFRFYk1Ca0dBMVVFQXd3U2RHVnpkQzFyZFdKbFkyOXVabWxuTFdOaE1DQVhE" \
    "VEkyTVRJd05ERXlNemN5TmxvWQpEekl4TWpZeE1URXdNVEl6TnpJMldqQWRNUnN3R1FZRFZRUUREQkowWlhOMExXdDFZ" \
    "bVZqYjI1bWFXY3RZMkV3CldUQVRCZ2NxaGtqT1BRSUJCZ2dxaGtqT1BRTUJCd05DQUFTc2hwTXR3NVhINUFCWndhcFND" \
    "c29JYkpIUnhxNVQKZWloNkV0NHJHNDJTaGpmajJISllIN1IvUWJzUzRrdStHcDFVbmRzQmROQ3E3V25uWEhBOUQzbGRv" \
    "MU13VVRBZApCZ05WSFE0RUZnUVVTZzA4YzIvOWhsaTA2bURJdGtDdnhWQ3VtMGN3SHdZRFZSMGpCQmd3Rm9BVVNnMDhj" \
    "Mi85CmhsaTA2bURJdGtDdnhWQ3VtMGN3RHdZRFZSMFRBUUgvQkFVd0F3RUIvekFLQmdncWhrak9QUVFEQWdOSkFEQkcK" \
    "QWlFQTA5TmwwT2cwcVhnUFROYTdaSzBYeUpuOTBNeDQ5RjNvS0ViLzM2djhtWWtDSVFDRzM0c0oyREZDZ2dTVQorbjNp" \
    "bjdobklrSDZtcFNTc29yVmJpK1lsNSt0OEE9PQotLS0tLUVORCBDRVJUSUZJQ0FURS0tLS0tCg=="

#endif
