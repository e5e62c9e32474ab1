export { parseObjectLocation, type FileIO, type ListedFile, type ListingFileIO, type ObjectLocation } from './file-io.ts';
export { S3FileIO, type S3Credentials, type S3FileIOOptions } from './s3.ts';
export { s3FileIOForTable } from './table-io.ts';
